// The fresh app's program: each check throws on failure, and the process exits non-zero.
import { checkClient } from './client.js';
import { checkGraphql } from './graphql.js';
import { checkPostgres } from './postgres.js';
import { checkTrpc } from './trpc.js';

console.log(`app: running on Node ${process.version}`);
for (const check of [checkGraphql, checkTrpc, checkClient, checkPostgres]) {
  const at = performance.now();
  const said = await check();
  console.log(`app: ok (${((performance.now() - at) / 1000).toFixed(1)} s)  ${said}`);
}
