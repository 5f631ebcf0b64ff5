// Writes of many Applications at once, decided and audited by the caller (an ApplicationSet's
// generated Applications, the Applications a delivering Application brings or prunes): all in one
// transaction or none, each Application with exactly the events and outbox rows of its own write (a
// put as an upserting create, a delete as a delete).
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { applicationSubject } from '@capstan/events';
import { DEFAULT_CONTROL_NAMESPACE, type Application } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { actorOf } from '../auth/principal.js';
import type { RequestContext } from '../support/request.js';
import { runAggregates } from '../support/aggregate.js';
import {
  APPLICATION_DELETED,
  APPLICATION_DELETION_REQUESTED,
  decideApplication,
  evolveApplication,
  initialApplicationState,
  type ApplicationCommand,
  type ApplicationState,
} from './application.aggregate.js';
import { deletionTimestampOf } from './application-deletion.js';
import {
  deleteApplicationRows,
  findApplications,
  upsertApplicationRow,
  upsertApplicationRows,
} from './application.repository.js';
import { insertSyncOperation } from './sync-operation.repository.js';

/**
 * Writes Applications whose RBAC and project checks (or delete authorisation) the caller has
 * already made and audited (an ApplicationSet's generated Applications, decided all together before
 * any is written): all in one transaction or none, each Application with exactly the events and
 * outbox rows of its own write (a put as an upserting create, a delete as a delete).
 */
export async function writeApplications(
  db: Kysely<ApiDatabase>,
  ctx: RequestContext,
  writes: readonly CheckedWrite[],
): Promise<void> {
  const meta = { actor: actorOf(ctx.principal), correlationId: ctx.correlationId };
  // As Argo CD's ApplicationSet controller: an Application being deleted is left to finish.
  const deleting = await beingDeleted(db, writes);
  const todo = writes.filter((w) => w.kind !== 'put' || !deleting.has(keyOfWrite(w)));
  if (todo.length === 0) return;
  await runAggregates(db, {
    meta,
    initial: initialApplicationState,
    evolve: evolveApplication,
    commands: todo.map((w) => {
      const command: ApplicationCommand =
        w.kind === 'put'
          ? { type: 'create', application: w.app, upsert: true, uid: randomUUID() }
          : {
              type: 'delete',
              name: w.name,
              namespace: w.namespace,
              options: { cascade: w.cascade, propagationPolicy: undefined },
              operationId: randomUUID(),
              at: new Date(),
            };
      return {
        streamId: applicationSubject(...(keyOfWrite(w).split('/') as [string, string])),
        decide: (state: ApplicationState, version: number) => decideApplication(command, state, version),
      };
    }),
    project: async (trx, written) => {
      const deleted: { namespace: string; name: string }[] = [];
      const kept: Parameters<typeof upsertApplicationRows>[1][number][] = [];
      for (const w of written) {
        const last = w.events.at(-1);
        if (!last) continue;
        if (last.type === APPLICATION_DELETED)
          deleted.push({ namespace: last.data.namespace, name: last.data.name });
        else if (last.type === APPLICATION_DELETION_REQUESTED)
          await projectDeletionRequested(trx, last.data, w.state, w.version, w.at, meta.actor);
        else kept.push({ app: w.state.application!, version: w.version, uid: w.state.uid!, at: w.at });
      }
      await deleteApplicationRows(trx, deleted);
      await upsertApplicationRows(trx, kept);
    },
  });
}

/** The keys (`namespace/name`) of the written Applications that are being deleted. */
async function beingDeleted(db: Kysely<ApiDatabase>, writes: readonly CheckedWrite[]): Promise<Set<string>> {
  const keys = writes.filter((w) => w.kind === 'put').map((w) => keyOfWrite(w).split('/'));
  if (keys.length === 0) return new Set();
  const found = await findApplications(
    db,
    keys.map(([namespace, name]) => ({ namespace: namespace!, name: name! })),
  );
  return new Set(
    found
      .filter((a) => deletionTimestampOf(a.application))
      .map(
        (a) =>
          `${a.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${a.application.metadata.name}`,
      ),
  );
}

/**
 * A write of writeCheckedAll: an Application to create or update, or one to delete (cascade
 * undefined: the Application's own finalizers decide, as for any other path).
 */
export type CheckedWrite =
  | { kind: 'put'; app: Application }
  | { kind: 'delete'; namespace: string; name: string; cascade: boolean | undefined };

/**
 * An Application marked for a cascade deletion keeps its status; the deletion is an operation of the
 * Application, shown by get and history like a sync's.
 */
export async function projectDeletionRequested(
  trx: Transaction<ApiDatabase>,
  data: { operationId: string; propagationPolicy: string },
  state: ApplicationState,
  version: number,
  at: Date,
  actor: string,
): Promise<void> {
  const app = state.application!;
  await upsertApplicationRow(trx, app, version, state.uid!, at);
  await insertSyncOperation(trx, {
    id: data.operationId,
    appNamespace: app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
    appName: app.metadata.name,
    project: app.spec.project,
    phase: 'Pending',
    message: `deleting the resources (${data.propagationPolicy} propagation)`,
    revision: '',
    dryRun: false,
    prune: true,
    initiatedBy: actor,
    requestedAt: at,
  });
}

function keyOfWrite(w: CheckedWrite): string {
  return w.kind === 'put'
    ? `${w.app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${w.app.metadata.name}`
    : `${w.namespace}/${w.name}`;
}
