/**
 * Counted, not timed: the round trips and statements a call sends to its database. They do
 * not move with the machine, so test/bench/counts.test.ts pins them.
 *
 * - Postgres over TCP (node-postgres, postgres.js): a proxy in this process, between the
 *   driver and the server, reads the wire protocol. A statement is one of a simple query's
 *   (its text split at top-level semicolons) or an extended-protocol Execute. A round trip
 *   is a request that waits for the server (a simple Query, or a Sync) sent while every
 *   earlier one on its connection has been answered (ReadyForQuery): pipelined requests ride
 *   on the round trip under way, and a multi-statement query is one round trip.
 * - PGlite runs in this process: the same reader on its calls into the engine, a round trip
 *   per Sync (PGlite ends every `query` and `exec` with one). No network.
 * - SQLite (better-sqlite3) runs in this process: no round trips. A statement is a prepared
 *   statement's run/get/all/iterate, or one statement of an `exec`.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Database } from 'better-sqlite3';

export interface Tally {
  roundTrips: number;
  statements: number;
}

export interface Counter {
  /** Since the last `reset`. */
  read(): Tally;
  reset(): void;
  /** True when nothing sent is still unanswered. */
  idle(): boolean;
  close(): Promise<void>;
}

/** What one call sent, and after how many round trips it was answered. */
export interface Count extends Tally {
  answeredAfter: number;
}

/** Counts what `call` sends, including what it sends after it has answered (a ROLLBACK). */
export async function countCall(counter: Counter, call: () => Promise<unknown>): Promise<Count> {
  counter.reset();
  await call();
  const answeredAfter = counter.read().roundTrips;
  let last = '';
  for (let quiet = 0, tries = 0; quiet < 3 && tries < 200; tries++) {
    await new Promise((done) => setTimeout(done, 5));
    const now = JSON.stringify(counter.read());
    quiet = counter.idle() && now === last ? quiet + 1 : 0;
    last = now;
  }
  return { ...counter.read(), answeredAfter };
}

/** Statements in SQL text: split at semicolons outside quotes, identifiers and comments. */
export function statementsIn(text: string): number {
  let count = 0;
  let content = false;
  /** Where a quoted part or comment that starts at `from` ends: at `close`, or at the end. */
  const past = (close: string, from: number) => {
    const at = text.indexOf(close, from);
    return at < 0 ? text.length : at + close.length - 1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === ';') {
      if (content) count++;
      content = false;
    } else if (c === '-' && next === '-') i = past('\n', i);
    else if (c === '/' && next === '*') i = past('*/', i + 2);
    else if (!/\s/.test(c)) {
      content = true;
      const tag = c === '$' ? /^\$\w*\$/.exec(text.slice(i))?.[0] : undefined;
      if (c === '"') i = past('"', i + 1);
      else if (tag) i = past(tag, i + tag.length);
      else if (c === "'") {
        // E'...' takes backslash escapes (node-postgres's escapeLiteral writes them).
        const escapes = /[eE]/.test(text[i - 1] ?? '') && !/\w/.test(text[i - 2] ?? '');
        for (i++; i < text.length; i++) {
          if (escapes && text[i] === '\\') i++;
          else if (text[i] === "'" && text[++i] !== "'") break; // '' is a quote inside it
        }
        i--;
      }
    }
  }
  return content ? count + 1 : count;
}

const Q = 0x51; // Query
const E = 0x45; // Execute
const S = 0x53; // Sync
const Z = 0x5a; // ReadyForQuery
const SSL_REQUEST = 80877103;

/** Reads length-framed protocol messages from a stream; the first are untyped (startup). */
function messages(each: (type: number, body: Buffer) => void, untypedFirst = false) {
  let pending = Buffer.alloc(0);
  let untyped = untypedFirst;
  return (chunk: Uint8Array) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const head = untyped ? 0 : 1;
      if (pending.length < head + 4) return;
      const length = pending.readInt32BE(head);
      if (pending.length < head + length) return;
      const body = pending.subarray(head + 4, head + length);
      if (untyped && body.readInt32BE(0) === SSL_REQUEST) {
        throw new Error('bench counting: connect without SSL');
      }
      each(untyped ? 0 : pending[0]!, body);
      pending = pending.subarray(head + length);
      untyped = false;
    }
  };
}

/** The statements of a frontend message (a Query's text, or an Execute). */
function statementsOf(type: number, body: Buffer): number {
  if (type === Q) return statementsIn(body.toString('utf8', 0, body.length - 1));
  return type === E ? 1 : 0;
}

/** A counting proxy to a Postgres server; connect the drivers to `url`. */
export async function wireCounter(serverUrl: string): Promise<Counter & { url: string }> {
  const target = new URL(serverUrl);
  const tally = zero();
  const waiting = new Map<Socket, number>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    waiting.set(client, 0);
    const wait = (by: number) => waiting.set(client, waiting.get(client)! + by);
    const fromClient = messages((type, body) => {
      tally.statements += statementsOf(type, body);
      if (type === 0) wait(1); // startup: answered by the first ReadyForQuery
      if (type !== Q && type !== S) return;
      if (waiting.get(client) === 0) tally.roundTrips++;
      wait(1);
    }, true);
    const fromServer = messages((type) => type === Z && wait(-1));
    client.on('data', (chunk) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      fromServer(chunk);
      client.write(chunk);
    });
    const end = () => {
      waiting.delete(client);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('close', end).on('error', end);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const idle = () => [...waiting.values()].every((count) => count === 0);
  const close = () => new Promise<void>((closed) => server.close(() => closed()));
  return { ...counter(tally, close, idle), url: url.toString() };
}

/** The part of PGlite counted: every query, exec and transaction goes through it. */
interface PgliteEngine {
  execProtocolRawSync(message: Uint8Array): Uint8Array;
}

/** Counts a PGlite instance's statements and requests (no network: a call into the engine). */
export function pgliteCounter(pglite: PgliteEngine): Counter {
  const tally = zero();
  const read = messages((type, body) => {
    tally.statements += statementsOf(type, body);
    if (type === S) tally.roundTrips++;
  });
  const engine = pglite.execProtocolRawSync;
  pglite.execProtocolRawSync = function counted(this: PgliteEngine, message) {
    if (message[0] !== 0 && message[0] !== 0x58) read(message); // not startup or Terminate
    return engine.call(this, message);
  };
  return counter(tally, async () => {
    pglite.execProtocolRawSync = engine;
  });
}

/** Counts the statements one better-sqlite3 connection runs (every statement, prepared or not). */
export function sqliteCounter(client: Database): Counter {
  const tally = zero();
  const restore: Array<() => void> = [];
  const wrap = (
    prototype: object,
    name: string,
    count: (self: unknown, arg: unknown) => number,
  ) => {
    const methods = prototype as Record<string, (...args: unknown[]) => unknown>;
    const original = methods[name]!;
    methods[name] = function counted(this: unknown, ...args: unknown[]) {
      tally.statements += count(this, args[0]);
      return original.apply(this, args);
    };
    restore.push(() => (methods[name] = original));
  };
  const statement = Object.getPrototypeOf(client.prepare('select 1'));
  for (const name of ['run', 'get', 'all', 'iterate']) {
    wrap(statement, name, (self) => ((self as { database: unknown }).database === client ? 1 : 0));
  }
  wrap(Object.getPrototypeOf(client), 'exec', (self, text) =>
    self === client ? statementsIn(String(text)) : 0,
  );
  return counter(tally, async () => {
    for (const undo of restore) undo();
  });
}

function zero(): Tally {
  return { roundTrips: 0, statements: 0 };
}

function counter(tally: Tally, close: () => Promise<void>, idle = () => true): Counter {
  return { read: () => ({ ...tally }), reset: () => Object.assign(tally, zero()), idle, close };
}
