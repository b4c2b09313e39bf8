-- mutation-guard 0.2.0: the one-transaction claim (docs/postgres.md, "How a key is held").
-- A fresh guarded call claims its key inside its own business transaction and writes its
-- record once, complete, with the business writes; a replay is one read in that transaction.
--
-- Who holds a key: the transaction that holds the key's advisory lock,
-- pg_try_advisory_xact_lock(hashtextextended('k' <scope, key>, <the table's oid>)), taken by
-- `_begin` and held until that transaction ends: the server drops it at COMMIT, ROLLBACK or
-- when the connection dies (a crash frees the key at once). The lock is only a hint, so that a
-- duplicate in flight answers at once: the primary key decides (SPEC S7, S8). `_finish` inserts
-- the complete record; should any row have been committed for the key meanwhile (an engine
-- whose advisory locks do nothing, a claim that did not ask for the lock), its insert conflicts,
-- `_finish` answers false and the caller rolls the whole transaction back.
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
-- Records committed in flight (by 0.1.0, or by `_claim`, the lease claim, which stays for
-- processes of earlier versions during an upgrade) keep the lease rules of 0001_functions: a
-- live lease answers 409 or 422, an expired one is taken over by the same request. `_claim` is
-- replaced to respect the key's lock, so that it never claims a key a transaction holds.

-- The lease claim of 0001_functions, which now first tries the request's and the key's locks (above).
CREATE OR REPLACE FUNCTION "idempotency_records_claim"(
	p_scope text, p_key text, p_fingerprint text, p_operation text, p_token text,
	p_lease_ms double precision, p_expires_ms double precision, p_async_commit boolean)
RETURNS TABLE (status text, fingerprint text, operation text, state text, outcome text,
	result text, lease_expires_ms double precision, expires_ms double precision,
	created_ms double precision, read_ms double precision)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
	v_now timestamptz;
	v_found "idempotency_records"%ROWTYPE;
	v_eligible boolean;
	v_previous text;
	v_blocked boolean;
	v_other boolean;
BEGIN
	-- The request's lock, then the key's (as `_begin` takes them): when either is held by a
	-- running one-transaction claim, that claim has no row yet (see below).
	v_blocked := NOT pg_try_advisory_xact_lock(hashtextextended('r' || length(p_scope) || ':' || p_scope
		|| length(p_key) || ':' || p_key || p_fingerprint, '"idempotency_records"'::regclass::oid::bigint));
	v_other := NOT v_blocked AND NOT "idempotency_records_lock_briefly"(hashtextextended(
		'k' || length(p_scope) || ':' || p_scope || p_key, '"idempotency_records"'::regclass::oid::bigint));
	-- A look first: a replay (or a 409, or a 422) is then a read alone, with no write to
	-- attempt and nothing to commit.
	v_now := clock_timestamp();
	SELECT * INTO v_found FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key;
	IF (v_blocked OR v_other) AND (NOT FOUND OR v_found.expires_at <= v_now
			OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
				AND v_found.fingerprint = p_fingerprint)) THEN
		-- No committed record answers, and a one-transaction claim holds the key: in flight,
		-- for this request when it holds the request's lock (409), for another otherwise
		-- (an empty fingerprint: 422, S6). Never claimed over it.
		status := 'exists';
		fingerprint := CASE WHEN v_blocked THEN p_fingerprint ELSE '' END;
		operation := p_operation;
		state := 'in_flight';
		lease_expires_ms := (extract(epoch FROM v_now) * 1000)::float8;
		expires_ms := (extract(epoch FROM v_now) * 1000 + p_expires_ms)::float8;
		created_ms := (extract(epoch FROM v_now) * 1000)::float8;
		read_ms := created_ms;
		RETURN NEXT;
		RETURN;
	END IF;
	IF NOT FOUND THEN
		IF p_async_commit THEN
			PERFORM set_config('synchronous_commit', 'off', true);
		END IF;
		v_now := clock_timestamp();
		-- The claim itself (S7): the primary key decides, never the look above.
		INSERT INTO "idempotency_records" (scope, key, fingerprint, operation, state, token,
			lease_expires_at, expires_at, created_at)
		VALUES (p_scope, p_key, p_fingerprint, p_operation, 'in_flight', p_token,
			v_now + p_lease_ms * interval '1 millisecond',
			v_now + p_expires_ms * interval '1 millisecond', v_now)
		ON CONFLICT (scope, key) DO NOTHING;
		IF FOUND THEN
			status := 'claimed';
			RETURN NEXT;
			RETURN;
		END IF;
		-- A concurrent claim of the key won (our INSERT waited for it to commit): read it
		-- with a snapshot of this statement's own, which sees it under READ COMMITTED.
		v_now := clock_timestamp();
		SELECT * INTO v_found FROM "idempotency_records" r
		WHERE r.scope = p_scope AND r.key = p_key;
		IF NOT FOUND THEN
			status := 'again';
			RETURN NEXT;
			RETURN;
		END IF;
	END IF;
	v_eligible := v_found.expires_at <= v_now
		OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
			AND v_found.fingerprint = p_fingerprint);

	IF v_eligible THEN
		-- Rare: an expired lease or record. A compare-and-set that re-checks the rule itself:
		-- the record may have changed since the look above.
		WITH target AS (
			SELECT t.scope, t.key, t.state FROM "idempotency_records" t
			WHERE t.scope = p_scope AND t.key = p_key
				AND (t.expires_at <= clock_timestamp()
					OR (t.state = 'in_flight' AND t.lease_expires_at <= clock_timestamp()
						AND t.fingerprint = p_fingerprint))
			FOR UPDATE SKIP LOCKED
		)
		UPDATE "idempotency_records" AS r SET
			token = p_token,
			state = 'in_flight',
			fingerprint = p_fingerprint,
			operation = p_operation,
			outcome = NULL,
			result = NULL,
			lease_expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond',
			expires_at = clock_timestamp() + p_expires_ms * interval '1 millisecond',
			created_at = clock_timestamp(),
			completed_at = NULL
		FROM target
		WHERE r.scope = target.scope AND r.key = target.key
		RETURNING target.state INTO v_previous;
		IF v_previous IS NOT NULL THEN
			status := CASE v_previous WHEN 'in_flight' THEN 'taken_over' ELSE 'claimed' END;
			RETURN NEXT;
			RETURN;
		END IF;
		-- Locked by its running original (S11), or changed since we looked: as it is now.
		v_now := clock_timestamp();
		SELECT * INTO v_found FROM "idempotency_records" r
		WHERE r.scope = p_scope AND r.key = p_key;
		IF NOT FOUND THEN
			status := 'again';
			RETURN NEXT;
			RETURN;
		END IF;
		-- Still past its expiry: a concurrent takeover (or purge) holds it. Never replayed (S14).
		IF v_found.expires_at <= v_now THEN
			status := 'replacing';
			RETURN NEXT;
			RETURN;
		END IF;
	END IF;

	status := 'exists';
	fingerprint := v_found.fingerprint;
	operation := v_found.operation;
	state := v_found.state;
	outcome := v_found.outcome;
	result := v_found.result;
	lease_expires_ms := (extract(epoch FROM v_found.lease_expires_at) * 1000)::float8;
	expires_ms := (extract(epoch FROM v_found.expires_at) * 1000)::float8;
	created_ms := (extract(epoch FROM v_found.created_at) * 1000)::float8;
	read_ms := (extract(epoch FROM v_now) * 1000)::float8;
	RETURN NEXT;
END
$$;
--> statement-breakpoint
-- A transaction-scoped advisory lock, waiting at most 25 ms for it (SPEC S6): how `_begin` and
-- `_claim` take a key's lock once they hold its request's. Held by a running claim of another
-- request, it stays taken and the wait runs out (422). Held for a moment, it is had: by a
-- duplicate that answers and rolls back at once, or by a transaction that is ending, which
-- releases its locks one by one after its commit (its request's lock may already be free).
CREATE OR REPLACE FUNCTION "idempotency_records_lock_briefly"(p_lock bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	v_lock_timeout text := current_setting('lock_timeout');
BEGIN
	IF pg_try_advisory_xact_lock(p_lock) THEN
		RETURN true;
	END IF;
	BEGIN
		PERFORM set_config('lock_timeout', '25ms', true);
		PERFORM pg_advisory_xact_lock(p_lock);
		PERFORM set_config('lock_timeout', v_lock_timeout, true);
		RETURN true;
	EXCEPTION WHEN lock_not_available THEN
		-- The block's rollback restored `lock_timeout`.
		RETURN false;
	END;
END
$$;
--> statement-breakpoint
-- The one-transaction claim (SPEC S7, S10, S11), inside the caller's READ COMMITTED
-- transaction, before its work. It answers with one JSON object (as text, so that every driver
-- hands it over the same way), whose `status` says what the caller does:
--   'claimed'    the key is ours until this transaction ends; run the work, then `_finish`;
--   'taken_over' the same, in place of a lease-era claim whose lease expired;
--   'exists'     a committed record stands, in the other fields: complete (replay, or 422
--                for another fingerprint) or a lease-era claim in flight (409 or 422);
--   'busy'       another transaction holds the key for this same request: 409;
--   'reused'     another transaction holds the key for another request: 422.
-- `replace`: the key has a row that this transaction now holds locked (a record past its
-- expiry, or a lease-era claim taken over), which `_finish` overwrites.
-- One scalar, called as `select "<table>_begin"(...)`, not a set of rows: the server plans a
-- function called in FROM (`select * from f()`) on every call, and that cost about as much as
-- everything the function does (docs/postgres.md, "How a key is held").
-- (The DROP: during 0.2.0's development it returned a table, and a function's result type
-- cannot be replaced; so `postgresFunctionsSql()` applies again over such a database.)
DROP FUNCTION IF EXISTS "idempotency_records_begin"(text, text, text);
--> statement-breakpoint
CREATE FUNCTION "idempotency_records_begin"(p_scope text, p_key text,
	p_fingerprint text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v_space bigint := '"idempotency_records"'::regclass::oid::bigint;
	v_request_held boolean;
	v_key bigint;
	v_held boolean := false;
	v_now timestamptz;
	v_found "idempotency_records"%ROWTYPE;
	v_ours boolean;
	v_locked boolean;
BEGIN
	-- The request's lock first, then the key's: whoever holds the key's lock holds its own
	-- request's lock too, so a caller that got the request's lock but not the key's knows
	-- the holder runs another request. The key's is waited for briefly (`_lock_briefly`) when
	-- it is taken: a transaction that ends releases its locks one by one, and a caller that got
	-- the request's lock as it went must not take its key for another request's.
	v_request_held := pg_try_advisory_xact_lock(hashtextextended('r' || length(p_scope) || ':'
		|| p_scope || length(p_key) || ':' || p_key || p_fingerprint, v_space));
	IF v_request_held THEN
		v_key := hashtextextended('k' || length(p_scope) || ':' || p_scope || p_key, v_space);
		-- Free, as it nearly always is: taken here, without the call of a second function.
		v_held := pg_try_advisory_xact_lock(v_key);
		IF NOT v_held THEN
			v_held := "idempotency_records_lock_briefly"(v_key);
		END IF;
	END IF;
	v_now := clock_timestamp();
	SELECT * INTO v_found FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key;
	IF NOT FOUND THEN
		-- A fresh key, the common case; or one held for this request (409) or another (422).
		RETURN CASE WHEN v_held THEN '{"status":"claimed","replace":false}'
			WHEN v_request_held THEN '{"status":"reused","replace":false}'
			ELSE '{"status":"busy","replace":false}' END;
	END IF;
	-- A lease-era claim of this request whose lease expired: ours to take over (S11).
	v_ours := v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
		AND v_found.fingerprint = p_fingerprint;

	IF v_found.expires_at > v_now AND NOT v_ours THEN
		-- A complete record (whoever holds the locks: it is only replayed or refused), or a
		-- lease-era claim that is not ours to take over: as it stands.
		RETURN json_build_object('status', 'exists', 'replace', false,
			'fingerprint', v_found.fingerprint, 'operation', v_found.operation,
			'state', v_found.state, 'outcome', v_found.outcome, 'result', v_found.result,
			'lease_expires_ms', (extract(epoch FROM v_found.lease_expires_at) * 1000)::float8,
			'expires_ms', (extract(epoch FROM v_found.expires_at) * 1000)::float8,
			'created_ms', (extract(epoch FROM v_found.created_at) * 1000)::float8,
			'read_ms', (extract(epoch FROM v_now) * 1000)::float8)::text;
	END IF;

	IF v_held THEN
		-- Past its expiry (absent for everyone, S14), or ours to take over: hold its row for
		-- our life, so that no purge, lease-era takeover or lease-era original changes it
		-- before `_finish` overwrites it. Locked already: a lease-era original still runs (or
		-- a purge deletes the row): busy.
		PERFORM 1 FROM "idempotency_records" r
		WHERE r.scope = p_scope AND r.key = p_key
			AND (r.expires_at <= clock_timestamp()
				OR (r.state = 'in_flight' AND r.lease_expires_at <= clock_timestamp()
					AND r.fingerprint = p_fingerprint))
		FOR UPDATE SKIP LOCKED;
		v_locked := FOUND;
		RETURN json_build_object('status', CASE WHEN NOT v_locked THEN 'busy'
				WHEN v_found.state = 'in_flight' AND v_found.expires_at > v_now THEN 'taken_over'
				ELSE 'claimed' END,
			'replace', v_locked)::text;
	END IF;
	IF v_request_held AND NOT v_ours THEN
		-- The key's holder runs another request, and no record answers for ours (S6).
		RETURN '{"status":"reused","replace":false}';
	END IF;
	-- This request is in flight (or, holding the key for another request, the holder will
	-- find our lease-era claim taken over by no one: look again).
	-- (Locks taken by a caller that does not claim go with its transaction, which it rolls
	-- back at once.)
	RETURN '{"status":"busy","replace":false}';
END
$$;
--> statement-breakpoint
-- The record, written once, complete, in the transaction `_begin` claimed the key in (SPEC S7,
-- S8): the primary key decides. True when it was written; false when a row was committed for
-- the key meanwhile (one `_begin` did not hold), in which case the caller rolls back.
-- `p_replace`: the row `_begin` holds locked is overwritten. `created_at` is the
-- transaction's start, the moment of the claim.
CREATE OR REPLACE FUNCTION "idempotency_records_finish"(p_scope text, p_key text,
	p_fingerprint text, p_operation text, p_token text, p_replace boolean, p_outcome text,
	p_result text, p_retention_ms double precision)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO "idempotency_records" AS r (scope, key, fingerprint, operation, state, token,
		outcome, result, lease_expires_at, expires_at, created_at, completed_at)
	VALUES (p_scope, p_key, p_fingerprint, p_operation, 'complete', p_token, p_outcome, p_result,
		NULL, clock_timestamp() + p_retention_ms * interval '1 millisecond', now(),
		clock_timestamp())
	ON CONFLICT (scope, key) DO UPDATE SET
		fingerprint = excluded.fingerprint,
		operation = excluded.operation,
		state = 'complete',
		token = excluded.token,
		outcome = excluded.outcome,
		result = excluded.result,
		lease_expires_at = NULL,
		expires_at = excluded.expires_at,
		created_at = excluded.created_at,
		completed_at = excluded.completed_at
	WHERE p_replace;
	RETURN FOUND;
END
$$;
