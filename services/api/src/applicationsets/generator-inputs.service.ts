// What the appset service may read before it generates, as the delegated user (proposal 003's
// pre-generate check): a user who may not create a single Application cannot make the engine run
// generators at all, and generators read only repositories and clusters the user may get.
import type { Kysely } from 'kysely';
import { ProjectChain, redactRepoUrl, repoUrlProblem, type AppProject } from '@capstan/policy';
import type { Decision } from '@capstan/rbac';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { PolicyStore } from '../rbac/policy-store.js';
import type { RequestContext } from '../support/request.js';
import type { ClustersService } from '../clusters/clusters.service.js';
import { clusterObject } from '../clusters/clusters.service.js';
import { listClusters } from '../clusters/cluster.repository.js';
import { listProjects } from '../projects/project.repository.js';
import { repoObject } from '../repositories/repositories.service.js';
import { parseSetRef, type SetRef } from './ownership.js';
import { requireAppsetDelegation } from './appset-caller.js';
import { applicationSetLinesRefusal } from './appset-policy.js';

/** Argo CD's in-cluster destination, which the clusters generator offers when no cluster has its server. */
const IN_CLUSTER = 'https://kubernetes.default.svc';

export interface GeneratorClusterView {
  name: string;
  server: string;
  project: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

interface Check {
  resource: string;
  action: string;
  object: string;
  decision: Decision;
  missing?: string;
}

export class GeneratorInputsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      policy: PolicyStore;
      clusters: ClustersService;
    },
  ) {}

  /** The first of `objects` the caller may `action`, else the refusal on the first. */
  private firstAllowed(ctx: RequestContext, resource: string, action: string, objects: string[]) {
    for (const object of objects) {
      const decision = this.deps.authz.decide(ctx.principal, resource, action, object);
      if (decision.allowed) return { object, decision };
    }
    const object = objects[0]!;
    return { object, decision: this.deps.authz.decide(ctx.principal, resource, action, object) };
  }

  /**
   * `get` on the repository (the object form of RepositoriesService): unscoped, or scoped to a
   * project whose chain permits the URL as a source (a project role reaches `<project>/*`, which
   * must not stretch to another tenant's repository).
   */
  private repository(ctx: RequestContext, url: string, projects: Map<string, AppProject>): Check {
    const shown = redactRepoUrl(url);
    const problem = repoUrlProblem(url);
    if (problem)
      return {
        resource: 'repositories',
        action: 'get',
        object: shown,
        decision: { allowed: false, reason: problem },
        missing: `repository ${shown}: ${problem}`,
      };
    const scopes = [...projects.keys()].filter((name) => {
      const resolved = ProjectChain.resolve(name, (n) => projects.get(n));
      return resolved.ok && resolved.chain.permitsSource(url).allowed;
    });
    const r = this.firstAllowed(ctx, 'repositories', 'get', [
      repoObject('', url),
      ...scopes.map((p) => repoObject(p, url)),
    ]);
    const object = r.object.slice(0, r.object.length - url.length) + shown;
    return {
      resource: 'repositories',
      action: 'get',
      object,
      decision: r.decision,
      ...(r.decision.allowed ? {} : { missing: `repositories, get, ${shown}` }),
    };
  }

  private async clusters(ctx: RequestContext): Promise<Check> {
    const objects = (await listClusters(this.deps.db)).map((c) =>
      clusterObject(c.cluster.project, c.cluster.server),
    );
    const r = this.firstAllowed(ctx, 'clusters', 'get', objects.length > 0 ? objects : [IN_CLUSTER]);
    return {
      resource: 'clusters',
      action: 'get',
      object: r.object,
      decision: r.decision,
      ...(r.decision.allowed ? {} : { missing: 'clusters, get: the caller may get no cluster' }),
    };
  }

  /** `create` on Applications (`<project>/*`) in at least one project, with the `applicationsets` lines. */
  private createSomewhere(ctx: RequestContext, set: SetRef, projects: string[]): Check {
    for (const project of projects) {
      const object = `${project}/*`;
      const decision = this.deps.authz.decide(ctx.principal, 'applications', 'create', object);
      if (!decision.allowed) continue;
      if (applicationSetLinesRefusal(this.deps.policy.current, ctx.principal, 'create', project, set))
        continue;
      return { resource: 'applications', action: 'create', object, decision };
    }
    return {
      resource: 'applications',
      action: 'create',
      object: '*/*',
      decision: { allowed: false, reason: 'no project in which the caller may create an Application' },
      missing: 'applications, create: no project in which the caller may create an Application',
    };
  }

  async checkInputs(
    ctx: RequestContext,
    input: { applicationSet: string; repoUrls: readonly string[]; readsClusters: boolean },
  ): Promise<{ allowed: boolean; reason: string }> {
    const set = parseSetRef(input.applicationSet);
    await requireAppsetDelegation(this.deps.authz, ctx, 'ApplicationSetWritesService.CheckInputs', set);
    const projects = new Map(
      (await listProjects(this.deps.db)).map((p) => [p.project.metadata.name, p.project]),
    );
    const checks: Check[] = [...new Set(input.repoUrls)].map((url) => this.repository(ctx, url, projects));
    if (input.readsClusters) checks.push(await this.clusters(ctx));
    checks.push(this.createSomewhere(ctx, set, [...projects.keys()]));
    const label = `applicationset ${set.namespace}/${set.name}: before generating`;
    await this.deps.authz.recordAll(
      ctx.principal,
      ctx.via,
      checks.map((c) => ({
        ...c,
        decision: { ...c.decision, reason: `${label}: ${c.missing ?? c.decision.reason}` },
      })),
    );
    const missing = checks.flatMap((c) => (c.missing ? [c.missing] : []));
    return missing.length > 0
      ? { allowed: false, reason: `permission denied: ${missing.join('; ')}` }
      : { allowed: true, reason: '' };
  }

  /** The clusters the delegated user may get, for the clusters generator; never credentials. */
  async listClusters(ctx: RequestContext): Promise<GeneratorClusterView[]> {
    await requireAppsetDelegation(this.deps.authz, ctx, 'ApplicationSetWritesService.ListClusters');
    return (await this.deps.clusters.list(ctx)).map((c) => ({
      name: c.cluster.name,
      server: c.cluster.server,
      project: c.cluster.project ?? '',
      labels: c.cluster.labels,
      annotations: {},
    }));
  }
}
