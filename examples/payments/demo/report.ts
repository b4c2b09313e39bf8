/** Prints the storm's table, with what each column counts, and decides the verdict. */
import type { KeyReport } from './storm.js';

const COLUMNS = [
  ['surface', (r: KeyReport) => r.surface],
  ['scenario', (r: KeyReport) => r.scenario],
  ['key', (r: KeyReport) => r.key],
  ['requests', (r: KeyReport) => r.requests],
  ['executed', (r: KeyReport) => r.executed],
  ['replayed', (r: KeyReport) => r.replayed],
  ['in use (409)', (r: KeyReport) => r.inUse],
  ['dropped', (r: KeyReport) => r.dropped],
  ['payments stored', (r: KeyReport) => r.stored],
] as const;

type CountColumn = Exclude<(typeof COLUMNS)[number][0], 'surface' | 'scenario' | 'key'>;

/** What each count column counts, printed under the table. */
const LEGEND: Record<CountColumn, string> = {
  requests: 'HTTP requests the client sent for the key, retries included',
  executed: 'answers of a fresh run: the payment was made for that request and its answer arrived',
  replayed: 'answers marked Idempotent-Replayed: true (the stored answer; nothing ran)',
  'in use (409)': '409 answers: the key was in flight; the client waited and sent it again',
  dropped: 'requests the client gave up on before their answer came (it never saw one)',
  'payments stored': 'payments the service holds for the key afterwards (its list endpoint)',
};

export function printTable(reports: KeyReport[], log: (line: string) => void = console.log) {
  const rows = reports.map((r) => COLUMNS.map(([, cell]) => String(cell(r))));
  const headers = COLUMNS.map(([name]) => name);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  log(line(headers));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) log(line(row));
  const total = (pick: (r: KeyReport) => number) => reports.reduce((n, r) => n + pick(r), 0);
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  log(
    line([
      'total',
      '',
      `${reports.length} keys`,
      ...COLUMNS.slice(3).map(([, cell]) => String(total((r) => cell(r) as number))),
    ]),
  );
  log('');
  const counts = Object.entries(LEGEND);
  const width = Math.max(...counts.map(([name]) => name.length));
  for (const [name, meaning] of counts) log(`${name.padEnd(width)}  ${meaning}`);
  log('A dropped response shows executed 0 beside payments stored 1: the payment was made for');
  log('the request whose answer was dropped, and its retries got the stored answer (replayed).');
}

/** What went wrong, one line per problem; empty when every key was paid exactly once. */
export function problems(reports: KeyReport[]): string[] {
  const found: string[] = [];
  for (const r of reports) {
    if (r.stored > 1) found.push(`${r.key}: ${r.stored} payments stored for one key`);
    if (r.stored === 0) found.push(`${r.key}: no payment stored`);
    if (r.answeredIds.size > 1) found.push(`${r.key}: ${r.answeredIds.size} different answers`);
    for (const u of r.unexpected) found.push(`${r.key}: unexpected answer: ${u}`);
  }
  return found;
}
