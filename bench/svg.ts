/**
 * docs/benchmark-ratios.svg, written by hand: one bar per goal check, each drawn as how far it
 * is from its goal (measured ÷ limit for a cost, limit ÷ measured for a throughput), so every
 * goal line falls on the same vertical at 1 and shorter is always better. The label keeps the
 * real value and limit. Bars past the right edge are cut and marked. Where the run measured
 * the best any guarded call could do (a goal's `best`), a black tick marks it on the bar's row:
 * a tick right of the goal line is a floor measured over the limit (out of reach when its
 * interval is over it too: the goals table says). A thin line across a bar spans its value's
 * interval (interval.ts), how far the run's noise could move it.
 */
import { digitsFor, shortfall } from './goals.js';
import type { GoalCheck } from './results.js';

const WIDTH = 880;
const LABEL_WIDTH = 360;
const VALUE_WIDTH = 170;
const ROW = 22;
const TOP = 48;
const MAX_SCALE = 3;

export function ratiosSvg(goals: readonly GoalCheck[], subtitle: string): string {
  const plotWidth = WIDTH - LABEL_WIDTH - VALUE_WIDTH - 20;
  const x = (scaled: number) => LABEL_WIDTH + (Math.min(scaled, MAX_SCALE) / MAX_SCALE) * plotWidth;
  const height = TOP + goals.length * ROW + 40;
  const rows = goals.map((goal, i) => {
    const y = TOP + i * ROW;
    const scaled = shortfall(goal);
    const colour = goal.met ? '#2e7d32' : '#c62828';
    const cut =
      scaled > MAX_SCALE
        ? `<text x="${x(MAX_SCALE) + 4}" y="${y + 14}" fill="${colour}">»</text>`
        : '';
    const value = `${goal.value.toFixed(digitsFor(goal))}× (${goal.bound === 'at most' ? '≤' : '≥'} ${goal.limit}×)`;
    const bestX = goal.best && x(shortfall({ ...goal, value: goal.best.value })).toFixed(1);
    const best = bestX
      ? `<line x1="${bestX}" y1="${y + 1}" x2="${bestX}" y2="${y + ROW - 1}" stroke="#000" stroke-width="3"/>`
      : '';
    const spread = goal.interval?.map((end) => x(shortfall({ ...goal, value: end })).toFixed(1));
    const whisker = spread
      ? `<line x1="${spread[0]}" y1="${y + ROW / 2}" x2="${spread[1]}" y2="${y + ROW / 2}" stroke="#000" stroke-width="1"/>`
      : '';
    // The limit is in the value column; the baseline tells the goals of one case apart.
    const label = `${goal.subject} vs ${shortAgainst(goal)}`;
    return [
      `<text x="${LABEL_WIDTH - 8}" y="${y + 14}" text-anchor="end">${escapeXml(label)}</text>`,
      `<rect x="${LABEL_WIDTH}" y="${y + 4}" width="${(x(scaled) - LABEL_WIDTH).toFixed(1)}" height="${ROW - 8}" fill="${colour}" opacity="0.8"/>`,
      cut,
      whisker,
      best,
      `<text x="${WIDTH - VALUE_WIDTH}" y="${y + 14}">${escapeXml(value)} ${goal.met ? 'met' : 'not met'}</text>`,
    ].join('');
  });
  const goalX = x(1);
  const bottom = TOP + goals.length * ROW;
  const ticks = [0, 1, 2, 3]
    .map(
      (tick) =>
        `<text x="${x(tick)}" y="${bottom + 16}" text-anchor="middle" fill="#555">${tick === MAX_SCALE ? `≥${tick}` : tick}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12" role="img">
<title>mutation-guard benchmark goals: distance to each goal, ${escapeXml(subtitle)}</title>
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="22" font-size="15" font-weight="bold">mutation-guard: distance to each goal (the line at 1 is the goal; shorter is better)</text>
<text x="16" y="38" fill="#555">${escapeXml(subtitle)}</text>
${rows.join('\n')}
<line x1="${goalX}" y1="${TOP - 4}" x2="${goalX}" y2="${bottom}" stroke="#000" stroke-dasharray="4 3"/>
<text x="${goalX}" y="${TOP - 8}" text-anchor="middle">goal</text>
<line x1="${LABEL_WIDTH}" y1="${bottom}" x2="${x(MAX_SCALE)}" y2="${bottom}" stroke="#999"/>
${ticks}
<text x="${LABEL_WIDTH + plotWidth / 2}" y="${bottom + 32}" text-anchor="middle" fill="#555">measured ÷ limit (throughput: limit ÷ measured); thin line: its 95% interval; black tick: the best possible, same run</text>
</svg>
`;
}

/** The baseline without what it shares with the subject: `graphql.unguarded-tx`, `unguarded`. */
function shortAgainst({ subject, against }: GoalCheck): string {
  const [subjectDb, subjectGroup] = subject.split('.');
  const parts = against.split('.');
  if (parts[0] === subjectDb) parts.shift();
  if (subjectDb === 'http' && parts[0] === subjectGroup) parts.shift();
  return parts.join('.');
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
