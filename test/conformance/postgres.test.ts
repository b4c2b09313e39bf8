/** Store conformance on Postgres: node-postgres on the real server, and PGlite (SPEC S24). */
import { describePostgresConformance, drivers } from './postgres-suite.js';

await describePostgresConformance([drivers.nodePg, drivers.pglite]);
