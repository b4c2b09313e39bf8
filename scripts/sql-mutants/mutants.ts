/**
 * The bugs `npm run mutate:sql` plants in the SQL the Postgres store runs (issue 34), one at a
 * time. StrykerJS mutates TypeScript only, and most of the store's rules live in the
 * server-side functions the migrations create (drizzle/postgres) and in the statements
 * src/postgres/statements.ts sends.
 *
 * Each mutant is keyed on the text it changes, never on a file name or a line: `fn` names the
 * function (`"<table>_<fn>"`) whose last definition in the shipped migrations is changed, so
 * the list survives migrations being merged or split; `file` names a source file instead.
 * `search` (and each of `also`) must occur exactly once in that text (runs of whitespace match
 * any whitespace), or the run stops before testing anything. `untestable` says why no test can
 * catch a mutant, where none can; every other survivor fails the run.
 */
export interface SqlMutant {
  id: string;
  /** The contract rules (docs/contract.md) a user would see broken. */
  rules: string;
  /** The planted bug, in a phrase. */
  bug: string;
  where: { fn: string } | { file: string };
  search: string;
  replace: string;
  /** More edits of the same text, for a bug that takes more than one. */
  also?: { search: string; replace: string }[];
  /** Why no test can catch it: an equivalent mutant, or a race no test can time reliably. */
  untestable?: string;
}

const MICROSECOND =
  'equivalent: only a record whose expires_at equals clock_timestamp() to the microsecond tells them apart, an instant no test can land on';
/** Both of the lease claim's fingerprint checks must go for another request to take over. */
const LOOK_THEN_SET =
  "equivalent alone: the claim's first look and its compare-and-set each check the fingerprint, and either alone keeps another request out (the other could only matter were the record to change to another request's, lease run out, within microseconds) (claim-any-fingerprint removes both, and is caught); the look only spares the compare-and-set's statement";

export const SQL_MUTANTS: SqlMutant[] = [
  // The one-transaction claim, `_begin` (0002_one_transaction).
  {
    id: 'begin-lock-order',
    rules: 'S6, S10',
    bug: "begin takes the key's lock before the request's, and holds the key without it",
    where: { fn: 'begin' },
    search: `v_request_held := pg_try_advisory_xact_lock(hashtextextended('r' || length(p_scope) || ':'
		|| p_scope || length(p_key) || ':' || p_key || p_fingerprint, v_space));
	IF v_request_held THEN
		v_key := hashtextextended('k' || length(p_scope) || ':' || p_scope || p_key, v_space);`,
    replace: `v_key := hashtextextended('k' || length(p_scope) || ':' || p_scope || p_key, v_space);
	v_held := pg_try_advisory_xact_lock(v_key);
	v_request_held := pg_try_advisory_xact_lock(hashtextextended('r' || length(p_scope) || ':'
		|| p_scope || length(p_key) || ':' || p_key || p_fingerprint, v_space));
	IF v_request_held AND NOT v_held THEN`,
  },
  {
    id: 'begin-expiry-boundary',
    rules: 'S14',
    bug: 'begin: a record expiring at this very microsecond still answers (> becomes >=)',
    where: { fn: 'begin' },
    search: 'IF v_found.expires_at > v_now AND NOT v_ours THEN',
    replace: 'IF v_found.expires_at >= v_now AND NOT v_ours THEN',
    untestable: MICROSECOND,
  },
  {
    id: 'begin-expiry-ignored',
    rules: 'S14',
    bug: 'begin replays a complete record past its retention',
    where: { fn: 'begin' },
    search: 'IF v_found.expires_at > v_now AND NOT v_ours THEN',
    replace: 'IF NOT v_ours THEN',
  },
  {
    id: 'begin-takeover-any-fingerprint',
    rules: 'S6, S11',
    bug: 'begin takes over an expired lease-era claim of another request',
    where: { fn: 'begin' },
    search: `v_ours := v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
		AND v_found.fingerprint = p_fingerprint;`,
    replace: `v_ours := v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now;`,
  },
  {
    id: 'begin-busy-for-reused',
    rules: 'S6',
    bug: "begin answers 409 (busy) where another request holds the key (422's 'reused')",
    where: { fn: 'begin' },
    search: `WHEN v_request_held THEN '{"status":"reused","replace":false}'`,
    replace: `WHEN v_request_held THEN '{"status":"busy","replace":false}'`,
  },
  {
    id: 'begin-waits-for-row',
    rules: 'S10',
    bug: 'begin waits for the row lock of a running lease-era original (FOR UPDATE, not SKIP LOCKED)',
    where: { fn: 'begin' },
    search: `FOR UPDATE SKIP LOCKED;
		v_locked := FOUND;`,
    replace: `FOR UPDATE;
		v_locked := FOUND;`,
  },
  {
    id: 'begin-takeover-says-claimed',
    rules: 'S25',
    bug: "begin reports a takeover of a lease-era claim as a fresh claim (no 'taken-over' event)",
    where: { fn: 'begin' },
    search: `WHEN v_found.state = 'in_flight' AND v_found.expires_at > v_now THEN 'taken_over'`,
    replace: `WHEN v_found.state = 'in_flight' AND v_found.expires_at > v_now THEN 'claimed'`,
  },
  {
    id: 'begin-never-replaces',
    rules: 'S14',
    bug: 'begin never tells finish to replace the expired row it locked',
    where: { fn: 'begin' },
    search: `'replace', v_locked)::text;`,
    replace: `'replace', false)::text;`,
  },
  // The record written once, complete, `_finish` (0002_one_transaction).
  {
    id: 'finish-on-conflict-always-updates',
    rules: 'S7, S8',
    bug: 'finish overwrites a record committed meanwhile (ON CONFLICT ... DO UPDATE without WHERE)',
    where: { fn: 'finish' },
    search: `completed_at = excluded.completed_at
	WHERE p_replace;`,
    replace: `completed_at = excluded.completed_at;`,
  },
  {
    id: 'finish-on-conflict-do-nothing',
    rules: 'S14',
    bug: 'finish never replaces an expired row (its ON CONFLICT update never applies)',
    where: { fn: 'finish' },
    search: `completed_at = excluded.completed_at
	WHERE p_replace;`,
    replace: `completed_at = excluded.completed_at
	WHERE false;`,
  },
  {
    id: 'finish-keeps-old-expiry',
    rules: 'S9, S14',
    bug: 'finish, replacing an expired record, keeps its old expires_at',
    where: { fn: 'finish' },
    search: `expires_at = excluded.expires_at,`,
    replace: ``,
  },
  {
    id: 'finish-keeps-old-fingerprint',
    rules: 'S6, S9',
    bug: 'finish, replacing an expired record, keeps the old request fingerprint',
    where: { fn: 'finish' },
    search: `fingerprint = excluded.fingerprint,`,
    replace: ``,
  },
  // The lease claim, `_claim` (0001_functions, replaced by 0002_one_transaction).
  {
    id: 'claim-takeover-any-fingerprint',
    rules: 'S6, S11',
    bug: 'the lease claim takes over an expired lease of another request',
    where: { fn: 'claim' },
    search: `v_eligible := v_found.expires_at <= v_now
		OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
			AND v_found.fingerprint = p_fingerprint);`,
    replace: `v_eligible := v_found.expires_at <= v_now
		OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now);`,
    untestable: LOOK_THEN_SET,
  },
  {
    id: 'claim-recheck-any-fingerprint',
    rules: 'S6, S11',
    bug: "the lease claim's compare-and-set forgets the fingerprint (only its first look checks it)",
    where: { fn: 'claim' },
    search: `OR (t.state = 'in_flight' AND t.lease_expires_at <= clock_timestamp()
						AND t.fingerprint = p_fingerprint))`,
    replace: `OR (t.state = 'in_flight' AND t.lease_expires_at <= clock_timestamp()))`,
    untestable: LOOK_THEN_SET,
  },
  {
    id: 'claim-any-fingerprint',
    rules: 'S6, S11',
    bug: 'the lease claim takes over an expired lease of another request (both checks gone)',
    where: { fn: 'claim' },
    search: `OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now
			AND v_found.fingerprint = p_fingerprint);`,
    replace: `OR (v_found.state = 'in_flight' AND v_found.lease_expires_at <= v_now);`,
    also: [
      {
        search: `OR (t.state = 'in_flight' AND t.lease_expires_at <= clock_timestamp()
						AND t.fingerprint = p_fingerprint))`,
        replace: `OR (t.state = 'in_flight' AND t.lease_expires_at <= clock_timestamp()))`,
      },
    ],
  },
  {
    id: 'claim-ignores-other-request-lock',
    rules: 'S6, S7',
    bug: "the lease claim ignores a one-transaction claim of another request (the key's lock)",
    where: { fn: 'claim' },
    search: 'IF (v_blocked OR v_other) AND',
    replace: 'IF v_blocked AND',
  },
  {
    id: 'claim-waits-for-row',
    rules: 'S10, S11',
    bug: "the lease claim's takeover waits for a running original's row lock (no SKIP LOCKED)",
    where: { fn: 'claim' },
    search: `FOR UPDATE SKIP LOCKED
		)`,
    replace: `FOR UPDATE
		)`,
  },
  // The lease fence and its completion and release (0001_functions).
  {
    id: 'lock-without-token',
    rules: 'S8, S11',
    bug: 'the fence locks the record whoever holds its token',
    where: { fn: 'lock' },
    search: `AND r.token = p_token AND r.state = 'in_flight'`,
    replace: `AND r.state = 'in_flight'`,
  },
  {
    id: 'complete-without-token',
    rules: 'S8',
    bug: 'the fenced completion completes a record taken over by another token',
    where: { fn: 'complete' },
    search: `AND r.token = p_token AND r.state = 'in_flight'`,
    replace: `AND r.state = 'in_flight'`,
  },
  {
    id: 'complete-without-retention',
    rules: 'S9, S14',
    bug: 'the lease completion stores the record already expired (retention ignored)',
    where: { fn: 'complete' },
    search: `expires_at = clock_timestamp() + p_retention_ms * interval '1 millisecond',`,
    replace: `expires_at = clock_timestamp(),`,
  },
  {
    id: 'release-without-token',
    rules: 'S8, S12',
    bug: "the release deletes another token's claim",
    where: { fn: 'release' },
    search: `AND r.token = p_token AND r.state = 'in_flight'`,
    replace: `AND r.state = 'in_flight'`,
  },
  {
    id: 'release-complete-records',
    rules: 'S9, S12',
    bug: 'the release deletes a record that has completed under its token',
    where: { fn: 'release' },
    search: `AND r.token = p_token AND r.state = 'in_flight'`,
    replace: `AND r.token = p_token`,
  },
  // The brief wait for a key's lock, `_lock_briefly` (0002_one_transaction).
  {
    id: 'lock-briefly-waits-forever',
    rules: 'S6, S10',
    bug: "a duplicate of another request waits for the key's holder to end (no 25 ms limit)",
    where: { fn: 'lock_briefly' },
    search: `PERFORM set_config('lock_timeout', '25ms', true);`,
    replace: `PERFORM set_config('lock_timeout', '0', true);`,
  },
  {
    id: 'lock-briefly-never-waits',
    rules: 'S6',
    bug: "the key's lock is not waited for at all, even while its holder is releasing it",
    where: { fn: 'lock_briefly' },
    search: `PERFORM set_config('lock_timeout', '25ms', true);`,
    replace: `RETURN false;`,
    untestable:
      "a race: it differs only in the microseconds in which a transaction that held the key and rolled back has released its request's lock but not yet the key's; a test can stand in for that transaction only by releasing a lock within the 25 ms the duplicate waits, which a loaded machine does not time reliably",
  },
  // The purge statement (src/postgres/statements.ts).
  {
    id: 'purge-expiry-boundary',
    rules: 'S14',
    bug: 'purge spares a record expiring at this very microsecond (<= becomes <)',
    where: { file: 'src/postgres/statements.ts' },
    search: 'where expires_at <= (select clock_timestamp())',
    replace: 'where expires_at < (select clock_timestamp())',
    untestable: MICROSECOND,
  },
  {
    id: 'purge-live-records',
    rules: 'S14',
    bug: 'purge deletes records that have not expired',
    where: { file: 'src/postgres/statements.ts' },
    search: 'where expires_at <= (select clock_timestamp())',
    replace: 'where expires_at >= (select clock_timestamp())',
  },
  {
    id: 'purge-unbounded',
    rules: 'S14',
    bug: 'purge deletes every expired record in one batch (no LIMIT)',
    where: { file: 'src/postgres/statements.ts' },
    search: `limit \${p('batchSize')}`,
    replace: '',
  },
];
