// Declarative apply of Argo CD manifests (ApplicationSets are handed to the appset service as
// upserts, after everything else). Three passes so that bad input writes nothing: read and
// validate every document; authorise every write (one refusal refuses the whole request, audited);
// then write in dependency order (clusters, projects parents-first, repositories, applications).
// A dry run takes the same path (every check of every write, conflicts decided by the aggregates) and
// skips only the appends, so it gives the verdict the apply would.
// Each object is its own aggregate, so a failure of the store itself in the last pass can leave the
// objects before it written; the response and the error say which.
import { DEFAULT_CONTROL_NAMESPACE, type YamlLimits } from '@capstan/policy';
import type { Kysely } from 'kysely';
import { CapstanError, ValidationError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { findProject } from '../projects/project.repository.js';
import { findApplication } from '../applications/application.repository.js';
import { findCluster } from '../clusters/cluster.repository.js';
import { clusterObject } from '../clusters/clusters.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import type { ClustersService } from '../clusters/clusters.service.js';
import {
  repoObject,
  type RepositoriesService,
  type SecretPlan,
} from '../repositories/repositories.service.js';
import { identity, readManifests, type ApplyItem } from './manifests.js';
import type { WriteOutcome } from '../support/aggregate.js';
import type { PendingObjects } from '../support/write-options.js';
import { refOf, type ApplicationSetsService } from '../applicationsets/applicationsets.service.js';
import type { SettingsService } from '../settings/settings.service.js';

export interface ApplyResult {
  kind: string;
  name: string;
  namespace: string;
  action: 'created' | 'configured' | 'unchanged' | 'would-create' | 'would-configure';
  message: string;
}

/**
 * The RBAC check an item needs (for a repository Secret, also its authorised plan). An
 * ApplicationSet has no RBAC resource of its own: its plan is the appset service's dry run (every
 * generated Application checked for the caller), or none yet when the request brings the projects
 * or clusters it needs (then it is checked when written, last).
 */
type Plan =
  | { resource: string; action: string; object: string; secret?: SecretPlan }
  | { resource: undefined; outcome: WriteOutcome | undefined };

const ORDER: Record<ApplyItem['kind'], number> = {
  // Settings first: an argocd-rbac-cm given with projects governs what comes after it.
  Settings: -1,
  Cluster: 0,
  AppProject: 1,
  Repository: 2,
  Application: 3,
  ApplicationSet: 4,
};

/** Parents before children, so a child's parentProject exists when it is written. */
function orderProjects(items: ApplyItem[]): ApplyItem[] {
  const projects = items.filter((i) => i.kind === 'AppProject');
  const byName = new Map(projects.map((p) => [p.value.metadata.name, p]));
  const out: ApplyItem[] = [];
  const done = new Set<string>();
  const visit = (p: ApplyItem & { kind: 'AppProject' }, depth: number) => {
    const name = p.value.metadata.name;
    if (done.has(name) || depth > projects.length) return;
    const parent = p.value.spec.parentProject;
    const pp = parent ? byName.get(parent) : undefined;
    if (pp && pp.kind === 'AppProject') visit(pp, depth + 1);
    done.add(name);
    out.push(p);
  };
  for (const p of projects) if (p.kind === 'AppProject') visit(p, 0);
  return out;
}

/** Namespace and name of the kinds that have them (Argo CD objects). */
function namedOf(item: ApplyItem): { namespace: string; name: string } | undefined {
  switch (item.kind) {
    case 'Application':
    case 'AppProject':
      return {
        namespace: item.value.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
        name: item.value.metadata.name,
      };
    case 'ApplicationSet':
      return refOf(item.value);
    default:
      return undefined;
  }
}

export class ApplyService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      projects: ProjectsService;
      applications: ApplicationsService;
      clusters: ClustersService;
      repositories: RepositoriesService;
      applicationSets: ApplicationSetsService;
      settings: SettingsService;
      yamlLimits?: YamlLimits;
    },
  ) {}

  /** The RBAC check each item needs (all are made before anything is written). */
  private async plan(ctx: RequestContext, item: ApplyItem, bringsDependencies: boolean): Promise<Plan> {
    const db = this.deps.db;
    switch (item.kind) {
      case 'AppProject': {
        const existing = await findProject(db, item.value.metadata.name);
        return {
          resource: 'projects',
          action: existing ? 'update' : 'create',
          object: item.value.metadata.name,
        };
      }
      case 'Application': {
        const existing = await findApplication(
          db,
          item.value.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
          item.value.metadata.name,
        );
        return {
          resource: 'applications',
          action: existing ? 'update' : 'create',
          object: `${item.value.spec.project}/${item.value.metadata.name}`,
        };
      }
      case 'Cluster': {
        const existing = await findCluster(db, { server: item.value.server });
        return {
          resource: 'clusters',
          action: existing ? 'update' : 'create',
          object: clusterObject(item.value.project, item.value.server),
        };
      }
      case 'Repository': {
        // The repo service says what the Secret's name holds (a name of another scope is a conflict
        // here, in a dry run as in the apply); planSecret authorises create, and update on the
        // credential as it is and as it will be.
        const secret = await this.deps.repositories.planSecret(ctx, item.value);
        return {
          resource: 'repositories',
          action: secret.outcome === 'configured' ? 'update' : 'create',
          object: repoObject(item.value.project, item.value.repo),
          secret,
        };
      }
      case 'Settings':
        // Capstan's own RBAC resource (Argo CD has none: its ConfigMaps are edited with kubectl).
        return { resource: 'settings', action: 'update', object: item.value.object };
      case 'ApplicationSet':
        return {
          resource: undefined,
          outcome: bringsDependencies
            ? undefined
            : await this.deps.applicationSets.put(ctx, item.value, { dryRun: true }),
        };
    }
  }

  /**
   * One document's write, the same for apply and dry run: every check the write makes (validation,
   * RBAC, parents, project permissions, conflicts in the aggregate) runs; a dry run skips only the
   * append. What it brings is added to `pending` for the documents after it.
   */
  private async write(
    ctx: RequestContext,
    item: ApplyItem,
    plan: Plan,
    dryRun: boolean,
    pending: PendingObjects,
    warnings: string[],
  ): Promise<WriteOutcome> {
    const opts = { upsert: true, dryRun, pending };
    switch (item.kind) {
      case 'Settings': {
        const r = await this.deps.settings.put(ctx, item.value, { dryRun });
        warnings.push(...r.warnings);
        return r.outcome;
      }
      case 'Cluster': {
        const outcome = await this.deps.clusters.put(ctx, item.value, opts);
        if (item.value.name) pending.clusters.set(item.value.name, item.value.server);
        return outcome;
      }
      case 'AppProject': {
        const outcome = await this.deps.projects.put(ctx, item.value, opts);
        pending.projects.set(item.value.metadata.name, item.value);
        return outcome;
      }
      case 'Repository': {
        if (plan.resource === undefined) throw new Error('unreachable: a repository plan has its check');
        // The repo service planned it (a dry run on its side); the apply is pinned to that plan.
        if (dryRun) return plan.secret!.outcome;
        return (await this.deps.repositories.applySecret(ctx, item.value, plan.secret!)).outcome;
      }
      case 'Application':
        return this.deps.applications.put(ctx, item.value, opts);
      case 'ApplicationSet':
        if (dryRun && plan.resource === undefined && plan.outcome) return plan.outcome;
        return this.deps.applicationSets.put(ctx, item.value, { dryRun });
    }
  }

  async apply(
    ctx: RequestContext,
    manifests: string,
    opts: { dryRun: boolean; strict: boolean },
  ): Promise<{ results: ApplyResult[]; warnings: string[] }> {
    const items = readManifests(manifests, opts.strict, this.deps.yamlLimits);
    for (const item of items) {
      // Wrong values (and, with settings.strict, unknown keys) refuse the request before any write.
      if (item.kind === 'Settings') {
        try {
          this.deps.settings.check(item.value);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          throw new ValidationError(
            err.violations.map((v) => ({
              ...v,
              field: `document ${item.doc} (${identity(item)}): ${v.field}`,
            })),
            { cause: err },
          );
        }
      }
      if (item.kind === 'ApplicationSet') this.deps.applicationSets.requireBackend();
      if (item.kind !== 'Repository') continue;
      this.deps.repositories.validate(item.value);
      this.deps.repositories.requireBackend();
    }
    const bringsDependencies = items.some((i) => i.kind === 'AppProject' || i.kind === 'Cluster');
    const plans = new Map<ApplyItem, Plan>();
    for (const item of items) {
      try {
        plans.set(item, await this.plan(ctx, item, bringsDependencies));
      } catch (err) {
        if (err instanceof CapstanError && !(err instanceof ValidationError))
          throw new CapstanError(err.code, `document ${item.doc} (${identity(item)}): ${err.message}`, {
            cause: err,
          });
        throw err;
      }
    }
    // Every write must be allowed before any is made; the first refusal is audited and refuses all.
    for (const item of items) {
      const p = plans.get(item)!;
      if (p.resource === undefined) continue;
      if (!this.deps.authz.decide(ctx.principal, p.resource, p.action, p.object).allowed) {
        await this.deps.authz.check(ctx.principal, p.resource, p.action, p.object, ctx.via);
      }
    }
    const ordered = [
      ...items.filter((i) => i.kind === 'Settings'),
      ...items.filter((i) => i.kind === 'Cluster'),
      ...orderProjects(items),
      ...items.filter((i) => i.kind === 'Repository'),
      ...items.filter((i) => i.kind === 'Application'),
      ...items.filter((i) => i.kind === 'ApplicationSet'),
    ].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
    const results: ApplyResult[] = [];
    const warnings: string[] = [];
    const pending: PendingObjects = { projects: new Map(), clusters: new Map() };
    for (const item of ordered) {
      const [kind, ...rest] = identity(item).split(' ');
      const full = rest.join(' ');
      const named = namedOf(item);
      const namespace = named?.namespace ?? '';
      const name = named?.name ?? full;
      const base = { kind: kind!, name, namespace };
      try {
        const outcome = await this.write(ctx, item, plans.get(item)!, opts.dryRun, pending, warnings);
        results.push({
          ...base,
          action:
            opts.dryRun && outcome !== 'unchanged'
              ? (`would-${outcome === 'created' ? 'create' : 'configure'}` as const)
              : outcome,
          message: '',
        });
      } catch (err) {
        if (err instanceof ValidationError) {
          throw new ValidationError(
            err.violations.map((v) => ({
              ...v,
              field: `document ${item.doc} (${identity(item)}): ${v.field}`,
            })),
            { cause: err },
          );
        }
        if (err instanceof CapstanError && results.length > 0) {
          const done = results.map((r) => `${r.kind} ${r.name}`).join(', ');
          throw new CapstanError(
            err.code,
            `document ${item.doc} (${identity(item)}): ${err.message} (${opts.dryRun ? 'checked before it' : 'already applied'}: ${done})`,
            { cause: err },
          );
        }
        if (err instanceof CapstanError)
          throw new CapstanError(err.code, `document ${item.doc} (${identity(item)}): ${err.message}`, {
            cause: err,
          });
        throw err;
      }
    }
    return { results, warnings };
  }
}
