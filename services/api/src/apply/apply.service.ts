// Declarative apply of Argo CD manifests. Three passes so that bad input writes nothing: read and
// validate every document; authorise every write (one refusal refuses the whole request, audited);
// then write in dependency order (clusters, projects parents-first, repositories, applications).
// Each object is its own aggregate, so a failure of the store itself in the last pass can leave the
// objects before it written; the response and the error say which.
import { DEFAULT_CONTROL_NAMESPACE, type YamlLimits } from '@capstan/policy';
import type { Kysely } from 'kysely';
import { CapstanError, ValidationError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { sameManifest } from '../support/canonical.js';
import { findProject } from '../projects/project.repository.js';
import { findApplication } from '../applications/application.repository.js';
import { findCluster } from '../clusters/cluster.repository.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import type { ClustersService } from '../clusters/clusters.service.js';
import { repoObject, type RepositoriesService } from '../repositories/repositories.service.js';
import { identity, readManifests, type ApplyItem } from './manifests.js';

export interface ApplyResult {
  kind: string;
  name: string;
  namespace: string;
  action: 'created' | 'configured' | 'unchanged' | 'would-create' | 'would-configure';
  message: string;
}

const ORDER: Record<ApplyItem['kind'], number> = { Cluster: 0, AppProject: 1, Repository: 2, Application: 3 };

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

export class ApplyService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      projects: ProjectsService;
      applications: ApplicationsService;
      clusters: ClustersService;
      repositories: RepositoriesService;
      yamlLimits?: YamlLimits;
    },
  ) {}

  /** What each item would do, and the RBAC check it needs. */
  private async plan(
    item: ApplyItem,
  ): Promise<{ resource: string; action: string; object: string; exists: boolean; unchanged: boolean }> {
    const db = this.deps.db;
    switch (item.kind) {
      case 'AppProject': {
        const existing = await findProject(db, item.value.metadata.name);
        return {
          resource: 'projects',
          action: existing ? 'update' : 'create',
          object: item.value.metadata.name,
          exists: !!existing,
          unchanged: !!existing && sameManifest(existing.project, item.value),
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
          exists: !!existing,
          unchanged: !!existing && sameManifest(existing.application, item.value),
        };
      }
      case 'Cluster': {
        const existing = await findCluster(db, { server: item.value.server });
        return {
          resource: 'clusters',
          action: existing ? 'update' : 'create',
          object: item.value.server,
          exists: !!existing,
          unchanged: false,
        };
      }
      case 'Repository':
        return {
          resource: 'repositories',
          action: 'create',
          object: repoObject(item.value.project, item.value.repo),
          exists: false,
          unchanged: false,
        };
    }
  }

  async apply(
    ctx: RequestContext,
    manifests: string,
    opts: { dryRun: boolean; strict: boolean },
  ): Promise<ApplyResult[]> {
    const items = readManifests(manifests, opts.strict, this.deps.yamlLimits);
    for (const item of items) {
      if (item.kind !== 'Repository') continue;
      this.deps.repositories.validate(item.value);
      this.deps.repositories.requireBackend();
    }
    const plans = new Map<ApplyItem, Awaited<ReturnType<ApplyService['plan']>>>();
    for (const item of items) plans.set(item, await this.plan(item));
    // Every write must be allowed before any is made; the first refusal is audited and refuses all.
    for (const item of items) {
      const p = plans.get(item)!;
      if (!this.deps.authz.decide(ctx.principal, p.resource, p.action, p.object).allowed) {
        await this.deps.authz.check(ctx.principal, p.resource, p.action, p.object, ctx.via);
      }
    }
    const ordered = [
      ...items.filter((i) => i.kind === 'Cluster'),
      ...orderProjects(items),
      ...items.filter((i) => i.kind === 'Repository'),
      ...items.filter((i) => i.kind === 'Application'),
    ].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
    const results: ApplyResult[] = [];
    for (const item of ordered) {
      const p = plans.get(item)!;
      const [kind, ...rest] = identity(item).split(' ');
      const full = rest.join(' ');
      const namespace =
        item.kind === 'Application' || item.kind === 'AppProject'
          ? (item.value.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE)
          : '';
      const name =
        item.kind === 'Application' || item.kind === 'AppProject' ? item.value.metadata.name : full;
      const base = { kind: kind!, name, namespace };
      if (opts.dryRun) {
        results.push({
          ...base,
          action: p.unchanged ? 'unchanged' : p.exists ? 'would-configure' : 'would-create',
          message: '',
        });
        continue;
      }
      try {
        switch (item.kind) {
          case 'Cluster':
            await this.deps.clusters.createValidated(ctx, item.value, true);
            break;
          case 'AppProject':
            await this.deps.projects.createValidated(ctx, item.value, true);
            break;
          case 'Repository':
            await this.deps.repositories.create(ctx, item.value, true);
            break;
          case 'Application':
            await this.deps.applications.createValidated(ctx, item.value, true);
            break;
        }
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
            `document ${item.doc} (${identity(item)}): ${err.message} (already applied: ${done})`,
            { cause: err },
          );
        }
        if (err instanceof CapstanError)
          throw new CapstanError(err.code, `document ${item.doc} (${identity(item)}): ${err.message}`, {
            cause: err,
          });
        throw err;
      }
      results.push({
        ...base,
        action: p.unchanged ? 'unchanged' : p.exists ? 'configured' : 'created',
        message: '',
      });
    }
    return results;
  }
}
