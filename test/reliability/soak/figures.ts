/**
 * Soak files record their figures here (one JSON line each, in a temp file shared across
 * vitest workers); summary.ts prints them all at the end of the run.
 */
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const FIGURES_FILE = join(tmpdir(), 'mutation-guard-soak-figures.jsonl');

export interface Figure {
  scenario: string;
  /** Flat figures: trials, requests, duplicates, doubleExecutions, lostResults, ... */
  figures: Record<string, number | string>;
}

export function record(figure: Figure): void {
  appendFileSync(FIGURES_FILE, `${JSON.stringify(figure)}\n`);
  console.log(`[soak] ${figure.scenario}: ${JSON.stringify(figure.figures)}`);
}

/** A random seed, printed, so that a failing soak run can be replayed. */
export function soakSeed(name: string): number {
  const fromEnv = process.env.SOAK_SEED;
  const seed = fromEnv ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 31);
  console.log(`[soak] ${name}: seed ${seed} (replay with SOAK_SEED=${seed})`);
  return seed;
}
