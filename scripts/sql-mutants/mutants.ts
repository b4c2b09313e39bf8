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
export const SQL_MUTANTS: SqlMutant[] = [
  // The claim, `_begin` (0000_init).
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
    search: 'IF v_exists AND v_found.expires_at > v_now THEN',
    replace: 'IF v_exists AND v_found.expires_at >= v_now THEN',
    untestable: MICROSECOND,
  },
  {
    id: 'begin-expiry-ignored',
    rules: 'S14',
    bug: 'begin replays a complete record past its retention',
    where: { fn: 'begin' },
    search: 'IF v_exists AND v_found.expires_at > v_now THEN',
    replace: 'IF v_exists THEN',
  },
  {
    id: 'begin-busy-for-reused',
    rules: 'S6',
    bug: "begin answers 409 (busy) where another request holds the key (422's 'reused')",
    where: { fn: 'begin' },
    search: `WHEN v_request_held THEN '{"status":"reused","replace":false}'`,
    replace: `WHEN v_request_held THEN '{"status":"busy","replace":false}'`,
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
  // The lease fence and its completion and release (0001_functions).
  // The brief wait for a key's lock, `_lock_briefly` (0002_one_transaction).
  {
    id: 'lock-briefly-waits-forever',
    rules: 'S6, S10',
    bug: "a duplicate of another request waits for the key's holder to end (no 25 ms limit)",
    where: { fn: 'begin' },
    search: `PERFORM set_config('lock_timeout', '25ms', true);`,
    replace: `PERFORM set_config('lock_timeout', '0', true);`,
  },
  {
    id: 'lock-briefly-never-waits',
    rules: 'S6',
    bug: "the key's lock is not waited for at all, even while its holder is releasing it",
    where: { fn: 'begin' },
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
