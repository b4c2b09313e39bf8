CREATE TABLE "idempotency_records" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"operation" text NOT NULL,
	"outcome" text NOT NULL,
	"result" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_records_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records" USING btree ("expires_at");
--> statement-breakpoint
-- mutation-guard: how a key is held (docs/postgres.md, "How a key is held"). A guarded call
-- claims its key inside its own business transaction and writes its record once, complete,
-- with the business writes; a replay is one read in that transaction. These two functions are
-- all the store calls besides a plain read and purge. PL/pgSQL keeps each statement's plan for
-- the session, so a call parses and plans only `select "<table>_begin"(...)`; functions, unlike
-- named prepared statements, work behind any pooler (SPEC S27). Every name starts with the
-- table's name: migratePostgres renames them with the table, and schema-qualifies them.
-- Times are the database clock, `clock_timestamp()` (SPEC S11), returned as epoch milliseconds.
--
-- Who holds a key: the transaction that holds the key's advisory lock,
-- pg_try_advisory_xact_lock(hashtextextended('k' <scope, key>, <the table's oid>)), taken by
-- `_begin` and held until that transaction ends: the server drops it at COMMIT, ROLLBACK or
-- when the connection dies (a crash frees the key at once). The lock is only a hint, so that a
-- duplicate in flight answers at once: the primary key decides (SPEC S7, S8). `_finish` inserts
-- the complete record; should any row have been committed for the key meanwhile (an engine
-- whose advisory locks do nothing, say), its insert conflicts, `_finish` answers false and the
-- caller rolls the whole transaction back.
--
-- Before the key's lock, every caller takes the request's: 'r' <scope, key, fingerprint>. So
-- whoever holds a key's lock holds its request's too, and a duplicate tells 409 from 422 with
-- no row to read: the request's lock taken by someone, this request is in flight (409, at
-- once); ours but not the key's (after up to 25 ms), another request holds the key (422,
-- SPEC S6). A committed record, when there is one, answers instead. Never 422 for the same
-- request; two duplicates of another request at the same moment may get 409 (the other one
-- holds their request's lock while it answers), and a retry then gets 422. A hash collision
-- with another key in flight (about n in 2^64 for n keys in flight) can only give a
-- duplicate's answer to a fresh call: 409, or 422.
--
-- `_begin` runs inside the caller's READ COMMITTED transaction, before its work. It answers
-- with one JSON object (as text, so that every driver hands it over the same way), whose
-- `status` says what the caller does:
--   'claimed'    the key is ours until this transaction ends; run the work, then `_finish`;
--   'exists'     a complete record stands, in the other fields: replay it, or 422 for
--                another fingerprint;
--   'busy'       another transaction holds the key for this same request: 409;
--   'reused'     another transaction holds the key for another request: 422.
-- `replace`: the key has a row past its expiry (absent for everyone, SPEC S14) that this
-- transaction now holds locked, and `_finish` overwrites it.
-- One scalar, called as `select "<table>_begin"(...)`, not a set of rows: the server plans a
-- function called in FROM (`select * from f()`) on every call, and that cost about as much as
-- everything the function does (docs/postgres.md, "How a key is held").
CREATE OR REPLACE FUNCTION "idempotency_records_begin"(p_scope text, p_key text, p_fingerprint text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v_space bigint := '"idempotency_records"'::regclass::oid::bigint;
	v_request_held boolean;
	v_key bigint;
	v_held boolean := false;
	v_lock_timeout text;
	v_now timestamptz;
	v_found "idempotency_records"%ROWTYPE;
	v_exists boolean;
BEGIN
	-- The request's lock first, then the key's: whoever holds the key's lock holds its own
	-- request's lock too, so a caller that got the request's lock but not the key's knows
	-- the holder runs another request.
	v_request_held := pg_try_advisory_xact_lock(hashtextextended('r' || length(p_scope) || ':'
		|| p_scope || length(p_key) || ':' || p_key || p_fingerprint, v_space));
	IF v_request_held THEN
		v_key := hashtextextended('k' || length(p_scope) || ':' || p_scope || p_key, v_space);
		-- Free, as it nearly always is: taken at once.
		v_held := pg_try_advisory_xact_lock(v_key);
		IF NOT v_held THEN
			-- Taken: waited for, at most 25 ms. A transaction that ends releases its locks one by
			-- one after its commit, so a caller that got the request's lock as it went must not
			-- take its key for another request's. Held by a running claim of another request, it
			-- stays taken and the wait runs out (422). (The block, with its subtransaction, is
			-- entered only here.)
			v_lock_timeout := current_setting('lock_timeout');
			BEGIN
				PERFORM set_config('lock_timeout', '25ms', true);
				PERFORM pg_advisory_xact_lock(v_key);
				PERFORM set_config('lock_timeout', v_lock_timeout, true);
				v_held := true;
			EXCEPTION WHEN lock_not_available THEN
				-- The block's rollback restored `lock_timeout`.
				v_held := false;
			END;
		END IF;
	END IF;
	v_now := clock_timestamp();
	SELECT * INTO v_found FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key;
	v_exists := FOUND;
	IF v_exists AND v_found.expires_at > v_now THEN
		-- A complete record (whoever holds the locks: it is only replayed or refused).
		RETURN json_build_object('status', 'exists', 'replace', false,
			'fingerprint', v_found.fingerprint, 'operation', v_found.operation,
			'outcome', v_found.outcome, 'result', v_found.result,
			'expires_ms', (extract(epoch FROM v_found.expires_at) * 1000)::float8,
			'created_ms', (extract(epoch FROM v_found.created_at) * 1000)::float8,
			'read_ms', (extract(epoch FROM v_now) * 1000)::float8)::text;
	END IF;
	IF NOT v_held THEN
		-- Held by another transaction: for this request (409) or another (422). (The locks a
		-- caller took go with its transaction, which it rolls back at once.)
		RETURN CASE WHEN v_request_held THEN '{"status":"reused","replace":false}'
			ELSE '{"status":"busy","replace":false}' END;
	END IF;
	IF NOT v_exists THEN
		-- A fresh key, the common case.
		RETURN '{"status":"claimed","replace":false}';
	END IF;
	-- Past its expiry (S14): hold its row for our life, so that no purge deletes it before
	-- `_finish` overwrites it. Locked already (a purge deletes it right now): busy.
	PERFORM 1 FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key AND r.expires_at <= clock_timestamp()
	FOR UPDATE SKIP LOCKED;
	RETURN CASE WHEN FOUND THEN '{"status":"claimed","replace":true}'
		ELSE '{"status":"busy","replace":false}' END;
END
$$;
--> statement-breakpoint
-- The record, written once, complete, in the transaction `_begin` claimed the key in (SPEC S7,
-- S8): the primary key decides. True when it was written; false when a row was committed for
-- the key meanwhile (one `_begin` did not hold), in which case the caller rolls back.
-- `p_replace`: the row `_begin` holds locked is overwritten. `created_at` is the
-- transaction's start, the moment of the claim.
CREATE OR REPLACE FUNCTION "idempotency_records_finish"(p_scope text, p_key text, p_fingerprint text,
	p_operation text, p_replace boolean, p_outcome text, p_result text,
	p_retention_ms double precision)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO "idempotency_records" AS r (scope, key, fingerprint, operation, outcome, result,
		expires_at, created_at, completed_at)
	VALUES (p_scope, p_key, p_fingerprint, p_operation, p_outcome, p_result,
		clock_timestamp() + p_retention_ms * interval '1 millisecond', now(), clock_timestamp())
	ON CONFLICT (scope, key) DO UPDATE SET
		fingerprint = excluded.fingerprint,
		operation = excluded.operation,
		outcome = excluded.outcome,
		result = excluded.result,
		expires_at = excluded.expires_at,
		created_at = excluded.created_at,
		completed_at = excluded.completed_at
	WHERE p_replace;
	RETURN FOUND;
END
$$;
