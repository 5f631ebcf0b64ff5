import type { Kysely, Migration } from 'kysely';

// The W3C traceparent of the span that queued an operation (the consumer of its sync request, or the
// reconciler's automation), so the attempt's span continues that trace when a worker claims it later
// (docs/observability.md). Null while tracing is off.
export const operationTrace: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.withSchema('sync').alterTable('operations').addColumn('trace_parent', 'text').execute();
  },
};
