export { createDb, pingDb, type DbOptions } from './connection.js';
export { isDatabaseOutage } from './outage.js';
export { migrateToLatest, MigrationError, type Migrations } from './migrate.js';
export * from './audit/audit.table.js';
export {
  appendAudit,
  appendAuditBatch,
  verifyAuditChain,
  migrateAudit,
  type ChainVerification,
} from './audit/audit.repository.js';
export type { Kysely, Transaction } from 'kysely';
