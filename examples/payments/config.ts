/**
 * The demo's knobs, all from the environment (see README "Quick start"). Bad values stop
 * the server at start with a message naming the variable, rather than being ignored.
 */
import { redactUrl } from './redact.js';

export interface DemoConfig {
  port: number;
  /** `postgres://...` selects Postgres; unset selects the embedded SQLite file. */
  databaseUrl: string | undefined;
  sqlitePath: string;
  /** Simulated card-processor latency inside the mutation's transaction. */
  paymentLatencyMs: number;
  retentionMs: number | undefined;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(
      `DATABASE_URL must start with postgres:// or postgresql:// (got ${JSON.stringify(redactUrl(databaseUrl))}).`,
    );
  }
  return {
    port: integer(env, 'PORT', 4000, 0),
    databaseUrl,
    sqlitePath: env.SQLITE_PATH?.trim() || '.data/payments.sqlite',
    paymentLatencyMs: integer(env, 'PAYMENT_LATENCY_MS', 0, 0),
    retentionMs: optionalInteger(env, 'IDEMPOTENCY_RETENTION_MS', 1),
  };
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  return optionalInteger(env, name, min) ?? fallback;
}

function optionalInteger(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(
      `${name} must be a whole number of at least ${min} (got ${JSON.stringify(raw)}).`,
    );
  }
  return value;
}
