/** The machine and the versions a run measured, for the report. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { createClient } from 'redis';
import { DATABASE_URL } from './db.js';
import { REDIS_URL } from './peer.js';

const PACKAGES = [
  'graphql-yoga',
  'graphql',
  '@trpc/server',
  'drizzle-orm',
  'better-sqlite3',
  'pg',
  'postgres',
  '@electric-sql/pglite',
  '@node-idempotency/core',
  'redis',
  'tsx',
];

export function machine(): Record<string, string | number> {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage1m: Number(os.loadavg()[0]!.toFixed(2)),
  };
}

export async function versions(): Promise<Record<string, string>> {
  const found: Record<string, string> = {
    node: process.version,
    'mutation-guard': packageVersion('.'),
  };
  for (const name of PACKAGES) found[name] = packageVersion(`node_modules/${name}`);
  found['PostgreSQL server'] = await postgresVersion();
  found['Redis server'] = await redisVersion();
  return found;
}

function packageVersion(dir: string): string {
  try {
    const text = readFileSync(new URL(`../${dir}/package.json`, import.meta.url), 'utf8');
    return (JSON.parse(text) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

async function postgresVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query<{ server_version: string }>('show server_version');
    return result.rows[0]?.server_version ?? 'unknown';
  } finally {
    await client.end();
  }
}

async function redisVersion(): Promise<string> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    const info = await client.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } finally {
    await client.disconnect();
  }
}
