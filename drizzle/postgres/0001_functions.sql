-- mutation-guard 0.2.0: the store's statements as server-side functions (docs/postgres.md).
-- PL/pgSQL keeps each statement's plan for the session, so a call parses and plans only
-- `select * from "<table>_claim"(...)`, not the statement itself: that was most of 0.1.0's
-- cost. Functions, unlike named prepared statements, work behind any pooler (SPEC S27).
-- Every name starts with the table's name: migratePostgres renames them with the table.
-- Times are the database clock, `clock_timestamp()` (SPEC S11), returned as epoch milliseconds.
--
-- Which existing record may be claimed over (SPEC S6, S11, S14), the same rule in the claim's
-- first look and in the takeover's own re-check:
-- - a record past its whole `expires_at` counts as absent: any request, of any fingerprint,
--   may claim it;
-- - an in-flight record whose lease expired, but not past `expires_at`, may be taken over by
--   the same fingerprint only.

-- The claim (SPEC S7): inserts an in-flight record, or takes over one the rule allows, or
-- returns the record that stands (a replay is one read). `status` says which:
--   'claimed'    the key is ours (a new record, or one past its expiry replaced);
--   'taken_over' the key is ours, in place of an in-flight claim whose lease had expired;
--   'exists'     the record that stands, in the other columns;
--   'replacing'  past its expiry, yet locked by a concurrent takeover or purge: look again;
--   'again'      the conflicting record went away meanwhile: look again.
-- `p_async_commit`: this statement's own transaction commits without waiting for its WAL
-- flush (src/postgres/store.ts says why losing an unflushed claim in a crash is harmless).
-- SKIP LOCKED in the takeover: a running original holds its row lock for its whole life
-- (the `_lock` function), so while it runs nothing is taken over and the caller answers at
-- once (409) instead of blocking.
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
BEGIN
	-- A look first: a replay (or a 409, or a 422) is then a read alone, with no write to
	-- attempt and nothing to commit.
	v_now := clock_timestamp();
	SELECT * INTO v_found FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key;
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
-- The fence, locked for the business transaction's life (SPEC S8, S11): the record, if it is
-- still in flight under our token; no row when the claim was taken over.
CREATE OR REPLACE FUNCTION "idempotency_records_lock"(p_scope text, p_key text, p_token text)
RETURNS TABLE (fingerprint text, operation text, state text, outcome text, result text,
	lease_expires_ms double precision, expires_ms double precision,
	created_ms double precision, read_ms double precision)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
	RETURN QUERY
	SELECT r.fingerprint, r.operation, r.state, r.outcome, r.result,
		(extract(epoch FROM r.lease_expires_at) * 1000)::float8,
		(extract(epoch FROM r.expires_at) * 1000)::float8,
		(extract(epoch FROM r.created_at) * 1000)::float8,
		(extract(epoch FROM clock_timestamp()) * 1000)::float8
	FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key AND r.token = p_token AND r.state = 'in_flight'
	FOR UPDATE;
END
$$;
--> statement-breakpoint
-- The fenced completion (SPEC S8): true when our token still held the record.
CREATE OR REPLACE FUNCTION "idempotency_records_complete"(p_scope text, p_key text,
	p_token text, p_outcome text, p_result text, p_retention_ms double precision)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE "idempotency_records" r SET
		state = 'complete',
		outcome = p_outcome,
		result = p_result,
		completed_at = clock_timestamp(),
		expires_at = clock_timestamp() + p_retention_ms * interval '1 millisecond',
		lease_expires_at = NULL
	WHERE r.scope = p_scope AND r.key = p_key AND r.token = p_token AND r.state = 'in_flight';
	RETURN FOUND;
END
$$;
--> statement-breakpoint
-- The fenced release of a claim (SPEC S12): true when our token still held the record.
CREATE OR REPLACE FUNCTION "idempotency_records_release"(p_scope text, p_key text, p_token text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM "idempotency_records" r
	WHERE r.scope = p_scope AND r.key = p_key AND r.token = p_token AND r.state = 'in_flight';
	RETURN FOUND;
END
$$;
