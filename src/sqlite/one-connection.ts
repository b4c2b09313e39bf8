/**
 * One connection per database file per process (SPEC S23).
 *
 * Two better-sqlite3 connections to one file in one process cannot share it safely: while one
 * holds a write transaction across an await, the other's write waits for the lock inside a
 * synchronous call, so the whole event loop (including the transaction that would free the
 * lock) stands still for the busy timeout, and the write then fails. So a store refuses a
 * second connection to a file that another open connection of this process already stores
 * into. The file is compared by device and inode, so another spelling of its path, a symlink
 * or a hard link is recognised as the same file.
 */
import { statSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

/** The connection each file is stored through, by `dev:ino`; weak, so closed ones can go. */
const owners = new Map<string, WeakRef<Database>>();

/** Throws unless `client` is the only open connection of this process storing into its file. */
export function claimDatabaseFile(client: Database): void {
  const file = mainDatabaseFile(client);
  if (file === undefined) return;
  let identity: string;
  try {
    const stat = statSync(file);
    identity = `${stat.dev}:${stat.ino}`;
  } catch {
    return; // not a file we can see (a URI, a VFS): nothing to compare
  }
  const owner = owners.get(identity)?.deref();
  if (owner && owner !== client && owner.open) {
    throw new Error(
      `sqliteStore: ${JSON.stringify(file)} is already used by a store on another connection in this process (opened as ${JSON.stringify(owner.name)}). Two connections to one SQLite file in one process block the event loop while either holds a write transaction; pass the same Drizzle database (or its better-sqlite3 connection) to every store.`,
    );
  }
  owners.set(identity, new WeakRef(client));
}

/** The main database's file, or undefined for an in-memory or temporary database. */
function mainDatabaseFile(client: Database): string | undefined {
  if (client.memory) return undefined;
  const databases = client.pragma('database_list') as { name: string; file: string }[];
  const file = databases.find((d) => d.name === 'main')?.file;
  return file ? file : undefined;
}
