// Use cases of AppProjects: authorise (RBAC, audited), validate with @capstan/policy, check the
// parent chain (self-service: rights on the parents, the bound check), then run the aggregate;
// reads come from the projection.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { FailedPreconditionError, NotFoundError, ValidationError } from '@capstan/service';
import {
  ClusterDirectory,
  DEFAULT_CONTROL_NAMESPACE,
  effectiveRestrictions,
  formatIssues,
  projectBoundIssues,
  type AppProject,
} from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { PolicyStore } from '../rbac/policy-store.js';
import { actorOf } from '../auth/principal.js';
import type { RequestContext } from '../support/request.js';
import { outcomeOf, runAggregate, type WriteOutcome } from '../support/aggregate.js';
import type { PendingObjects, WriteOptions } from '../support/write-options.js';
import { invalid, violationsOf } from '../support/validation.js';
import { listClusters } from '../clusters/cluster.repository.js';
import { deliveredBy, deliveredRefusal, withoutTracking } from '../delivery/tracking.js';
import { authorizeParents } from './project.authority.js';
import { withholdUnreadable, type EffectiveView } from './effective-view.js';
import {
  decideProject,
  evolveProject,
  initialProjectState,
  PROJECT_CREATED,
  PROJECT_DELETED,
  type ProjectCommand,
} from './project.aggregate.js';
import { validateProject } from './project.validation.js';
import {
  childProjects,
  deleteProjectRow,
  findProject,
  listProjects,
  upsertProjectRow,
  type StoredProject,
} from './project.repository.js';

export const projectStream = (name: string) => `projects/${name}`;

function nameOf(manifest: unknown): string {
  const name = (manifest as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  if (typeof name !== 'string' || name === '') throw invalid('metadata.name', 'required');
  return name;
}

export class ProjectsService {
  constructor(private readonly deps: { db: Kysely<ApiDatabase>; authz: Authorizer; policy: PolicyStore }) {}

  private async run(ctx: RequestContext, name: string, command: ProjectCommand): Promise<StoredProject> {
    await this.runCommand(ctx, name, command, false);
    return (await findProject(this.deps.db, name)) as StoredProject;
  }

  private async runCommand(
    ctx: RequestContext,
    name: string,
    command: ProjectCommand,
    dryRun: boolean,
  ): Promise<WriteOutcome> {
    const { db } = this.deps;
    const { events } = await runAggregate(db, {
      dryRun,
      streamId: projectStream(name),
      meta: { actor: actorOf(ctx.principal), correlationId: ctx.correlationId },
      initial: initialProjectState,
      evolve: evolveProject,
      decide: (state, version) => decideProject(command, state, version),
      project: async (trx, events, state, version, at) => {
        if (events.length === 0) return;
        if (events.at(-1)!.type === PROJECT_DELETED) await deleteProjectRow(trx, name);
        else await upsertProjectRow(trx, state.project!, version, state.uid!, at);
      },
    });
    // Project roles are RBAC: the policy in force changes with them.
    if (!dryRun) await this.deps.policy.reload();
    return outcomeOf(events, PROJECT_CREATED);
  }

  /** Validates without writing (apply --dry-run and the declarative apply's first pass). */
  validate(manifest: unknown, prefix = ''): AppProject {
    return validateProject(manifest, prefix);
  }

  async create(ctx: RequestContext, manifest: unknown, upsert: boolean): Promise<StoredProject> {
    const name = nameOf(manifest);
    const existing = await findProject(this.deps.db, name);
    await this.deps.authz.check(
      ctx.principal,
      'projects',
      existing && upsert ? 'update' : 'create',
      name,
      ctx.via,
    );
    const project = validateProject(manifest);
    return this.createValidated(ctx, project, upsert);
  }

  async createValidated(ctx: RequestContext, project: AppProject, upsert: boolean): Promise<StoredProject> {
    await this.put(ctx, project, { upsert });
    return (await findProject(this.deps.db, project.metadata.name)) as StoredProject;
  }

  /**
   * The write of create, update and apply, and the one place of a project's write-time checks
   * (RBAC on the project itself is the caller's): not delivered from git, the parent exists and
   * makes no cycle, the caller's rights on the parents and the admin rule for unbounded projects
   * (project.authority.ts), and the bound check (a child lists nothing its chain could never
   * allow). A dry run only skips the append.
   */
  async put(ctx: RequestContext, manifest: AppProject, opts: WriteOptions): Promise<WriteOutcome> {
    const project = withoutTracking(manifest);
    await this.requireNotDelivered(project.metadata.name);
    const before = (await findProject(this.deps.db, project.metadata.name))?.project;
    await this.check(ctx, before, project, opts.pending);
    return this.runCommand(
      ctx,
      project.metadata.name,
      {
        type: 'create',
        project,
        upsert: opts.upsert,
        isAdmin: this.deps.authz.isAdmin(ctx.principal),
        checkedParent: before?.spec.parentProject,
        uid: randomUUID(),
      },
      opts.dryRun ?? false,
    );
  }

  async update(ctx: RequestContext, manifest: unknown, expectedVersion: number): Promise<StoredProject> {
    const name = nameOf(manifest);
    await this.deps.authz.check(ctx.principal, 'projects', 'update', name, ctx.via);
    const project = withoutTracking(validateProject(manifest));
    await this.requireNotDelivered(name);
    const before = (await findProject(this.deps.db, name))?.project;
    if (before) await this.check(ctx, before, project);
    return this.run(ctx, name, {
      type: 'update',
      project,
      expectedVersion,
      isAdmin: this.deps.authz.isAdmin(ctx.principal),
      checkedParent: before?.spec.parentProject,
    });
  }

  private async check(
    ctx: RequestContext,
    before: AppProject | undefined,
    project: AppProject,
    pending?: PendingObjects,
  ): Promise<void> {
    const ancestors = await this.requireParent(project, pending);
    await authorizeParents(this.deps.authz, ctx, before, project);
    await this.requireWithinChain(ctx, before, project, ancestors, pending);
  }

  /** The bound check (projectBoundIssues): refused with the field violations, and audited. */
  private async requireWithinChain(
    ctx: RequestContext,
    before: AppProject | undefined,
    project: AppProject,
    ancestors: Map<string, AppProject>,
    pending?: PendingObjects,
  ): Promise<void> {
    if (project.spec.parentProject === undefined) return;
    const directory = await this.clusterDirectory(pending);
    const issues = projectBoundIssues(project, (n) => ancestors.get(n), directory);
    if (issues.length === 0) return;
    const name = project.metadata.name;
    await this.deps.authz.record(ctx.principal, 'projects', before ? 'update' : 'create', name, ctx.via, {
      allowed: false,
      reason: `project ${name} is wider than its parent chain: ${formatIssues(issues)}`,
    });
    throw new ValidationError(violationsOf(issues));
  }

  /** Registered clusters only, as the sync sees them (no built-in in-cluster entry). */
  private async clusterDirectory(pending?: PendingObjects): Promise<ClusterDirectory> {
    const clusters = (await listClusters(this.deps.db)).map(({ cluster }) => ({
      name: cluster.name,
      server: cluster.server,
      ...(cluster.project ? { project: cluster.project } : {}),
    }));
    for (const [name, server] of pending?.clusters ?? []) clusters.push({ name, server });
    return new ClusterDirectory(clusters, { inCluster: false });
  }

  /**
   * The project's effective restrictions under its chain (effectiveRestrictions of @capstan/policy),
   * for a caller who may get it. An entry of a link the caller may not get is withheld, and so is
   * the bound rule's message when a link above the entry's is such a link.
   */
  async effective(ctx: RequestContext, name: string): Promise<EffectiveView> {
    await this.deps.authz.check(ctx.principal, 'projects', 'get', name, ctx.via);
    const all = new Map((await listProjects(this.deps.db)).map((p) => [p.project.metadata.name, p.project]));
    if (!all.has(name)) throw new NotFoundError(`project ${name} not found`);
    const r = effectiveRestrictions(name, (n) => all.get(n), await this.clusterDirectory());
    if (!r.ok) throw new FailedPreconditionError(r.reason);
    const mayGet = (p: string) => this.deps.authz.decide(ctx.principal, 'projects', 'get', p).allowed;
    return withholdUnreadable(r.restrictions, mayGet);
  }

  async get(ctx: RequestContext, name: string): Promise<StoredProject> {
    await this.deps.authz.check(ctx.principal, 'projects', 'get', name, ctx.via);
    const found = await findProject(this.deps.db, name);
    if (!found) throw new NotFoundError(`project ${name} not found`);
    return found;
  }

  async list(ctx: RequestContext): Promise<StoredProject[]> {
    const all = await listProjects(this.deps.db);
    const visible = all.filter(
      (p) => this.deps.authz.decide(ctx.principal, 'projects', 'get', p.project.metadata.name).allowed,
    );
    await this.deps.authz.record(ctx.principal, 'projects', 'list', '*', ctx.via, {
      allowed: true,
      reason: `listed ${visible.length} of ${all.length} projects the caller may get`,
    });
    return visible;
  }

  async delete(ctx: RequestContext, name: string): Promise<void> {
    await this.deps.authz.check(ctx.principal, 'projects', 'delete', name, ctx.via);
    await this.requireNotDelivered(name);
    await this.deleteUnused(ctx, name);
  }

  /**
   * Writes an AppProject delivered from git (DeliveredObjectsService decided and audited it: the
   * delivering Application's project allows it, allowedParentProjects bounds it, it carries the
   * tracking id). The parent must exist, in `pending` or stored, and not make a cycle, and the
   * project must fit inside its chain (the bound check, as for every write).
   */
  async writeDelivered(ctx: RequestContext, project: AppProject, pending: PendingObjects): Promise<void> {
    const before = (await findProject(this.deps.db, project.metadata.name))?.project;
    const ancestors = await this.requireParent(project, pending);
    await this.requireWithinChain(ctx, before, project, ancestors, pending);
    // The delivering Application's project, not an account, authorised the write (no parent rights
    // of a user apply; allowedParentProjects bounded it).
    await this.runCommand(
      ctx,
      project.metadata.name,
      {
        type: 'create',
        project,
        upsert: true,
        isAdmin: true,
        checkedParent: before?.spec.parentProject,
        uid: randomUUID(),
      },
      false,
    );
  }

  /** Prunes a delivered AppProject (decided and audited by DeliveredObjectsService). */
  async deleteDelivered(ctx: RequestContext, name: string): Promise<void> {
    await this.deleteUnused(ctx, name);
  }

  /** A delivered AppProject changes in git only: users and other Applications are refused. */
  private async requireNotDelivered(name: string): Promise<void> {
    const existing = await findProject(this.deps.db, name);
    const owner = existing ? deliveredBy(existing.project.metadata) : undefined;
    if (owner) throw new FailedPreconditionError(deliveredRefusal('AppProject', name, owner));
  }

  private async deleteUnused(ctx: RequestContext, name: string): Promise<void> {
    const apps = await this.deps.db
      .withSchema('api')
      .selectFrom('applications')
      .select(['namespace', 'name'])
      .where('project', '=', name)
      .limit(3)
      .execute();
    if (apps.length > 0) {
      throw new FailedPreconditionError(
        `project ${name} still has applications (${apps.map((a) => `${a.namespace}/${a.name}`).join(', ')}${apps.length === 3 ? ', ...' : ''}): delete them first`,
      );
    }
    const children = await childProjects(this.deps.db, name);
    if (children.length > 0) {
      throw new FailedPreconditionError(
        `project ${name} is the parentProject of ${children.join(', ')}: change or delete them first`,
      );
    }
    await this.run(ctx, name, {
      type: 'delete',
      name,
      namespace: DEFAULT_CONTROL_NAMESPACE,
      expectedVersion: 0,
    });
  }

  /**
   * Walks up from the parent, reading each ancestor once: the parent must exist when named (a missing
   * parent would refuse every sync of the child), and reaching this project again would make a loop.
   * Returns the ancestors read, by name (for the bound check).
   */
  private async requireParent(
    project: AppProject,
    pending?: PendingObjects,
  ): Promise<Map<string, AppProject>> {
    const parent = project.spec.parentProject;
    const seen = new Set([project.metadata.name]);
    const ancestors = new Map<string, AppProject>();
    let cursor = parent;
    while (cursor) {
      if (seen.has(cursor)) throw invalid('spec.parentProject', `makes a cycle through ${cursor}`);
      seen.add(cursor);
      const found = pending?.projects.get(cursor) ?? (await findProject(this.deps.db, cursor))?.project;
      if (!found && cursor === parent)
        throw invalid('spec.parentProject', `project ${parent} does not exist`);
      if (found) ancestors.set(cursor, found);
      cursor = found?.spec.parentProject;
    }
    return ancestors;
  }
}
