/**
 * Store conformance on sessions whose default isolation is SERIALIZABLE, on both drivers
 * (SPEC S24: correct whatever the server's `default_transaction_isolation`).
 */
import { describePostgresConformance, drivers } from './postgres-suite.js';

await describePostgresConformance([drivers.nodePgSerializable, drivers.postgresJsSerializable]);
