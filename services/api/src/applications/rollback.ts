// Argo CD's Rollback (server/application/application.go): a convenience around Sync. The caller needs
// `applications, sync` on the Application (as Argo without server.rbac.rollback.enforce.enable); an
// Application being deleted or with automated sync enabled is refused with Argo's messages; the id
// must be one of status.history's; then a sync request goes out with that entry's revision and the
// trigger rollback. spec.targetRevision stays as it is, so the reconciler shows OutOfSync afterwards,
// as Argo does. Choosing "the previous deployment" when no id is given is the CLI's part, as in Argo.
import { DEFAULT_CONTROL_NAMESPACE, type Application } from '@capstan/policy';
import { FailedPreconditionError, InvalidArgumentError } from '@capstan/service';
import type { Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import type { RequestContext } from '../support/request.js';
import type { ApplicationsService } from './applications.service.js';
import type { StoredApplication } from './application.repository.js';
import { REVISION_HISTORY_LIMIT, revisionHistory } from './revision-history.js';

export interface RollbackRequest {
  name: string;
  appNamespace: string;
  project: string;
  id: number;
  dryRun: boolean;
  prune: boolean;
}

/** Argo CD's SyncPolicy.IsAutomatedSyncEnabled: automated present and not `enabled: false`. */
export function automatedSyncEnabled(app: Application): boolean {
  const automated = app.spec.syncPolicy?.automated;
  return automated !== undefined && automated !== null && automated.enabled !== false;
}

/** spec.revisionHistoryLimit, Argo's default 10 when unset. */
export function historyLimitOf(app: Application): number {
  return app.spec.revisionHistoryLimit ?? REVISION_HISTORY_LIMIT;
}

/** Argo's QualifiedName: the name alone in the control namespace, else namespace/name. */
function qualifiedName(a: StoredApplication): string {
  const ns = a.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
  return ns === DEFAULT_CONTROL_NAMESPACE
    ? a.application.metadata.name
    : `${ns}/${a.application.metadata.name}`;
}

export async function rollback(
  deps: { db: Kysely<ApiDatabase>; applications: ApplicationsService },
  ctx: RequestContext,
  r: RollbackRequest,
): Promise<{ operationId: string; application: StoredApplication }> {
  const app = await deps.applications.loadAuthorized(
    ctx,
    r.appNamespace,
    r.name,
    'sync',
    r.project || undefined,
  );
  if (app.application.metadata.deletionTimestamp)
    throw new FailedPreconditionError('application is deleting');
  if (automatedSyncEnabled(app.application))
    throw new FailedPreconditionError('rollback cannot be initiated when auto-sync is enabled');
  const namespace = app.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
  const history = await revisionHistory(deps.db, namespace, r.name, historyLimitOf(app.application));
  const entry = history.find((h) => h.historyId === r.id);
  if (!entry)
    throw new InvalidArgumentError(
      `application ${qualifiedName(app)} does not have deployment with id ${r.id}`,
    );
  if (entry.sources !== null) {
    // A multi-source deployment: every source back to its revision (Argo CD's rollback to
    // history.revisions); spec.sources stays as it is, as spec.targetRevision does for one source.
    if (entry.revisions.length !== entry.sources.length || entry.revisions.some((rev) => !rev))
      throw new FailedPreconditionError(
        `deployment ${r.id} of application ${qualifiedName(app)} has no recorded revisions: sync to a revision instead`,
      );
    return deps.applications.sync(ctx, namespace, r.name, {
      revision: '',
      revisions: entry.revisions,
      dryRun: r.dryRun,
      prune: r.prune,
      trigger: 'rollback',
      sources: entry.sources,
    });
  }
  if (!entry.revision)
    throw new FailedPreconditionError(
      `deployment ${r.id} of application ${qualifiedName(app)} has no recorded revision: sync to a revision instead`,
    );
  return deps.applications.sync(ctx, namespace, r.name, {
    revision: entry.revision,
    dryRun: r.dryRun,
    prune: r.prune,
    trigger: 'rollback',
    ...(entry.source ? { source: entry.source } : {}),
  });
}
