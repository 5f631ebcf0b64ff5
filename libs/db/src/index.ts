export { createDb, pingDb, type DbOptions } from './connection.js';
export { migrateToLatest, ensureSchema, MigrationError, type Migrations } from './migrate.js';
export * from './audit/audit.table.js';
export {
  appendAudit,
  appendAuditBatch,
  verifyAuditChain,
  migrateAudit,
  type ChainVerification,
} from './audit/audit.repository.js';
export { canonicalJson, GENESIS_HASH } from './audit/hash-chain.js';
export type { Kysely, Transaction } from 'kysely';
