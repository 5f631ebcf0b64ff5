// Use cases of Applications: RBAC on "<project>/<name>" objects (audited), validation with
// @capstan/policy, the aggregate for writes, the projection for reads, and sync requests that go to
// the sync service as a command through the outbox (committed with the operation record, or not at all).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  FailedPreconditionError,
  NotFoundError,
  ValidationError,
  type FieldViolation,
} from '@capstan/service';
import { applicationSubject } from '@capstan/events';
import { DEFAULT_CONTROL_NAMESPACE, type Application, type AppProject } from '@capstan/policy';
import type { RbacEnforcer } from '@capstan/rbac';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import { actorOf } from '../auth/principal.js';
import type { RequestContext } from '../support/request.js';
import { outcomeOf, runAggregate, type WriteOutcome } from '../support/aggregate.js';
import type { PendingObjects, WriteOptions } from '../support/write-options.js';
import {
  APPLICATION_DELETED,
  APPLICATION_DELETION_REQUESTED,
  decideApplication,
  evolveApplication,
  initialApplicationState,
  APPLICATION_CREATED,
  type ApplicationCommand,
} from './application.aggregate.js';
import { validateApplication } from './application.validation.js';
import { projectsByName, projectViolations } from './application-project-rules.js';
import {
  projectDeletionRequested,
  writeApplications,
  type CheckedWrite,
} from './application-batch-writes.js';

export type { CheckedWrite } from './application-batch-writes.js';
import { deletionTimestampOf, type DeleteOptions } from './application-deletion.js';
import { ApplicationCache } from './application-cache.js';
import { ApplicationStampPages } from './application-stamp-pages.js';
import { listApplications, type ListQuery } from './application-list.js';
import { recordSyncRequest, type SyncRequestOptions } from './application-sync.js';

import { keepOwnership } from '../applicationsets/ownership.js';
import { deliveredBy, deliveredRefusal, withoutTracking } from '../delivery/tracking.js';
import {
  deleteApplicationRow,
  findApplication,
  upsertApplicationRow,
  type StoredApplication,
} from './application.repository.js';
import { findSyncOperation, syncHistory, type SyncOperationRecord } from './sync-operation.repository.js';

export class ApplicationsService {
  private readonly cache: ApplicationCache;
  private readonly stampPages: ApplicationStampPages;

  constructor(
    private readonly deps: { db: Kysely<ApiDatabase>; authz: Authorizer; controlNamespace?: string },
  ) {
    this.cache = new ApplicationCache(deps.db);
    this.stampPages = new ApplicationStampPages(deps.db);
  }

  private object(project: string, name: string): string {
    return `${project}/${name}`;
  }

  validate(manifest: unknown, prefix = ''): Application {
    return validateApplication(manifest, prefix);
  }

  private run(
    ctx: RequestContext,
    namespace: string,
    name: string,
    command: ApplicationCommand,
    dryRun = false,
  ): Promise<WriteOutcome> {
    const meta = { actor: actorOf(ctx.principal), correlationId: ctx.correlationId };
    return this.runAs(meta, namespace, name, command, dryRun);
  }

  private async runAs(
    meta: { actor: string; correlationId?: string | undefined },
    namespace: string,
    name: string,
    command: ApplicationCommand,
    dryRun = false,
  ): Promise<WriteOutcome> {
    const { events } = await runAggregate(this.deps.db, {
      dryRun,
      streamId: applicationSubject(namespace, name),
      meta,
      initial: initialApplicationState,
      evolve: evolveApplication,
      decide: (state, version) => decideApplication(command, state, version),
      project: async (trx, events, state, version, at) => {
        const last = events.at(-1);
        if (last === undefined) return;
        if (last.type === APPLICATION_DELETED) return deleteApplicationRow(trx, namespace, name);
        if (last.type === APPLICATION_DELETION_REQUESTED)
          return projectDeletionRequested(trx, last.data, state, version, at, meta.actor);
        await upsertApplicationRow(trx, state.application!, version, state.uid!, at);
      },
    });
    return outcomeOf(events, APPLICATION_CREATED);
  }

  private async load(namespace: string, name: string): Promise<StoredApplication> {
    const found = await findApplication(this.deps.db, namespace, name);
    if (!found) throw new NotFoundError(`application ${namespace}/${name} not found`);
    return found;
  }

  async create(ctx: RequestContext, manifest: unknown, upsert: boolean): Promise<StoredApplication> {
    const app = validateApplication(manifest);
    return this.createValidated(ctx, app, upsert);
  }

  async createValidated(ctx: RequestContext, app: Application, upsert: boolean): Promise<StoredApplication> {
    await this.put(ctx, app, { upsert });
    return this.load(app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, app.metadata.name);
  }

  /** The write of create and apply, RBAC included; a dry run only skips the append. */
  async put(ctx: RequestContext, manifest: Application, opts: WriteOptions): Promise<WriteOutcome> {
    const { upsert } = opts;
    const app = withoutTracking(manifest);
    const { name } = app.metadata;
    const namespace = app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
    const existing = await findApplication(this.deps.db, namespace, name);
    requireNotDelivered(existing);
    if (existing && upsert) {
      await this.deps.authz.check(
        ctx.principal,
        'applications',
        'update',
        this.object(existing.project, name),
        ctx.via,
      );
      if (existing.project !== app.spec.project) {
        await this.deps.authz.check(
          ctx.principal,
          'applications',
          'update',
          this.object(app.spec.project, name),
          ctx.via,
        );
      }
    } else {
      await this.deps.authz.check(
        ctx.principal,
        'applications',
        'create',
        this.object(app.spec.project, name),
        ctx.via,
      );
    }
    await this.requireProject(app, opts.pending);
    return this.run(
      ctx,
      namespace,
      name,
      { type: 'create', application: keepOwnership(app, existing?.application), upsert, uid: randomUUID() },
      opts.dryRun,
    );
  }

  async update(ctx: RequestContext, manifest: unknown, expectedVersion: number): Promise<StoredApplication> {
    const app = withoutTracking(validateApplication(manifest));
    const namespace = app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
    const existing = await this.loadAuthorized(ctx, namespace, app.metadata.name, 'update');
    requireNotDelivered(existing);
    if (existing.project !== app.spec.project) {
      await this.deps.authz.check(
        ctx.principal,
        'applications',
        'update',
        this.object(app.spec.project, app.metadata.name),
        ctx.via,
      );
    }
    await this.requireProject(app);
    await this.run(ctx, namespace, app.metadata.name, {
      type: 'update',
      application: keepOwnership(app, existing.application),
      expectedVersion,
    });
    return this.load(namespace, app.metadata.name);
  }

  /**
   * Loads an application and checks `action` on it. When the application does not exist the check
   * is made on "*\/<name>" so that a caller cannot tell a missing application from a forbidden one.
   */
  async loadAuthorized(
    ctx: RequestContext,
    namespace: string,
    name: string,
    action: string,
    project?: string,
  ): Promise<StoredApplication> {
    const found = await findApplication(this.deps.db, namespace || DEFAULT_CONTROL_NAMESPACE, name);
    if (!found || (project && found.project !== project)) {
      await this.deps.authz.check(
        ctx.principal,
        'applications',
        action,
        this.object(project || '*', name),
        ctx.via,
      );
      throw new NotFoundError(
        `application ${namespace || DEFAULT_CONTROL_NAMESPACE}/${name} not found${project ? ` in project ${project}` : ''}`,
      );
    }
    await this.deps.authz.check(
      ctx.principal,
      'applications',
      action,
      this.object(found.project, name),
      ctx.via,
    );
    return found;
  }

  async get(
    ctx: RequestContext,
    namespace: string,
    name: string,
    project?: string,
  ): Promise<StoredApplication> {
    return this.loadAuthorized(ctx, namespace, name, 'get', project);
  }

  /** The applications the caller may get, a page at a time (application-list.ts). */
  list(
    ctx: RequestContext,
    q: ListQuery,
    policy: { readonly current: RbacEnforcer },
  ): Promise<{ items: StoredApplication[]; nextPageToken: string }> {
    return listApplications({ ...this.deps, cache: this.cache, stampPages: this.stampPages }, ctx, q, policy);
  }

  /**
   * Argo CD's ApplicationService.Delete: with a resources finalizer (set by cascade, or written in the
   * manifest) the Application is marked and stays until the sync service has deleted its resources;
   * otherwise (cascade=false) it goes at once and its resources stay.
   */
  async delete(ctx: RequestContext, namespace: string, name: string, options: DeleteOptions): Promise<void> {
    requireNotDelivered(await this.loadAuthorized(ctx, namespace, name, 'delete'));
    await this.deleteChecked(ctx, namespace || DEFAULT_CONTROL_NAMESPACE, name, options);
  }

  /** The sync service deleted every resource of an Application being deleted: it goes now. */
  async finalizeDeletion(
    meta: { actor: string; correlationId?: string | undefined },
    app: { namespace: string; name: string },
  ): Promise<void> {
    await this.runAs(meta, app.namespace, app.name, { type: 'finalize', ...app });
  }

  async sync(
    ctx: RequestContext,
    namespace: string,
    name: string,
    opts: SyncRequestOptions,
  ): Promise<{ operationId: string; application: StoredApplication }> {
    const app = await this.loadAuthorized(ctx, namespace, name, 'sync');
    const ns = namespace || DEFAULT_CONTROL_NAMESPACE;
    const deleting = deletionTimestampOf(app.application);
    if (deleting)
      throw new FailedPreconditionError(`application ${ns}/${name} is being deleted (since ${deleting})`);
    const operationId = await recordSyncRequest(this.deps.db, ctx, { namespace: ns, name }, app, opts);
    return { operationId, application: await this.load(ns, name) };
  }

  async history(ctx: RequestContext, namespace: string, name: string): Promise<SyncOperationRecord[]> {
    await this.loadAuthorized(ctx, namespace, name, 'get');
    return syncHistory(this.deps.db, namespace || DEFAULT_CONTROL_NAMESPACE, name);
  }

  async operation(
    ctx: RequestContext,
    namespace: string,
    name: string,
    id: string,
  ): Promise<SyncOperationRecord> {
    await this.loadAuthorized(ctx, namespace, name, 'get');
    const op = await findSyncOperation(this.deps.db, id);
    if (!op || op.appName !== name || op.appNamespace !== (namespace || DEFAULT_CONTROL_NAMESPACE)) {
      throw new NotFoundError(
        `sync operation ${id} of application ${namespace || DEFAULT_CONTROL_NAMESPACE}/${name} not found`,
      );
    }
    return op;
  }

  /**
   * The project (and every parent) must exist and permit the Application's sources and destination,
   * as Argo CD checks at write time; the sync service checks again with the same rules
   * (ProjectChain from @capstan/policy) before it touches a cluster.
   */
  private async requireProject(app: Application, pending?: PendingObjects): Promise<void> {
    const violations = await this.projectViolations(app, { pending });
    if (violations.length > 0) throw new ValidationError(violations);
  }

  /** Every project, by name: one read for checking many Applications (projectViolations' `projects`). */
  projectsByName(): Promise<Map<string, AppProject>> {
    return projectsByName(this.deps.db);
  }

  /**
   * What the project chain refuses of this Application, as field violations (none: permitted). The
   * check of every write of an Application, whoever makes it (a user, apply, an ApplicationSet).
   */
  projectViolations(
    app: Application,
    opts: { pending?: PendingObjects | undefined; projects?: Map<string, AppProject> } = {},
  ): Promise<FieldViolation[]> {
    return projectViolations(
      this.deps.db,
      this.deps.controlNamespace ?? DEFAULT_CONTROL_NAMESPACE,
      app,
      opts,
    );
  }

  /**
   * Writes Applications whose RBAC and project checks (or delete authorisation) the caller has
   * already made and audited: all in one transaction or none (application-batch-writes.ts).
   */
  writeCheckedAll(ctx: RequestContext, writes: readonly CheckedWrite[]): Promise<void> {
    return writeApplications(this.deps.db, ctx, writes);
  }

  /** Deletes an Application whose delete the caller has already authorised and audited. */
  async deleteChecked(
    ctx: RequestContext,
    namespace: string,
    name: string,
    options: DeleteOptions,
  ): Promise<void> {
    await this.run(ctx, namespace, name, {
      type: 'delete',
      name,
      namespace,
      options,
      operationId: randomUUID(),
      at: new Date(),
    });
  }
}

/** A delivered Application changes in git only: users are refused (sets and deliveries check ownership themselves). */
function requireNotDelivered(existing: StoredApplication | undefined): void {
  const owner = existing ? deliveredBy(existing.application.metadata) : undefined;
  if (owner)
    throw new FailedPreconditionError(
      deliveredRefusal('Application', existing!.application.metadata.name, owner),
    );
}
