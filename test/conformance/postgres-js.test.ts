/** Store conformance on Postgres through postgres.js (SPEC S24). */
import { describePostgresConformance, drivers } from './postgres-suite.js';

await describePostgresConformance([drivers.postgresJs]);
