// Applications that deliver AppProjects (GitOps self-service, proposal 001). When an Application
// sets spec.allowedParentProjects, every AppProject it would apply must name one of those
// parents (patterns allowed) as its parentProject; an AppProject without a parent is not bounded,
// and one named like an allowed parent would replace it, so both are refused. Every delivered
// AppProject must be valid, its chain (as it would be after the sync) must resolve, and, when it
// changes, it must fit inside that chain (project/bounds.ts: no entry its ancestors could never allow).
import { cachedGlob, GlobSyntaxError } from '@capstan/glob';
import { formatIssues } from '../issues.js';
import type { AppProject, Application, ClusterRef } from '../manifests/schemas.js';
import { projectBoundIssues } from '../project/bounds.js';
import { ProjectChain, type ProjectLookup } from '../project/chain.js';
import { compileProject } from '../project/compile.js';
import type { ClusterDirectory } from './destination.js';

export interface DeliveredProjectCheck {
  readonly project: string;
  readonly allowed: boolean;
  readonly reason: string;
}

export function checkDeliveredProjects(
  app: Application,
  delivered: readonly AppProject[],
  lookup: ProjectLookup,
  clusters: ClusterDirectory | readonly ClusterRef[] = [],
): DeliveredProjectCheck[] {
  const allowedParents = app.spec.allowedParentProjects;
  const byName = new Map(delivered.map((p) => [p.metadata.name, p]));
  // The chains as they will be once this sync has applied its AppProjects.
  const after: ProjectLookup = (name) => byName.get(name) ?? lookup(name);
  // An invalid pattern refuses every delivered AppProject (below), so matching never meets one.
  const badPattern = (allowedParents ?? []).findIndex((p) => {
    try {
      cachedGlob(p);
      return false;
    } catch (err) {
      if (err instanceof GlobSyntaxError) return true;
      throw err;
    }
  });
  const matchesAllowed = (value: string): boolean =>
    allowedParents!.some((pattern) => cachedGlob(pattern).match(value));

  return delivered.map((project): DeliveredProjectCheck => {
    const name = project.metadata.name;
    const deny = (reason: string) => ({
      project: name,
      allowed: false,
      reason: `AppProject ${JSON.stringify(name)}: ${reason}`,
    });
    if (badPattern >= 0)
      return deny(
        `spec.allowedParentProjects[${badPattern}] of Application ${JSON.stringify(app.metadata.name)} is not a valid glob`,
      );
    const issues = compileProject(project).issues;
    if (issues.length > 0) return deny(`invalid: ${formatIssues(issues)}`);
    if (allowedParents !== undefined) {
      const parent = project.spec.parentProject;
      if (parent === undefined)
        return deny(
          `has no spec.parentProject, but Application ${JSON.stringify(app.metadata.name)} only delivers AppProjects under ${JSON.stringify(allowedParents)}`,
        );
      if (!matchesAllowed(parent))
        return deny(
          `spec.parentProject ${JSON.stringify(parent)} is not one of the allowedParentProjects ${JSON.stringify(allowedParents)} of Application ${JSON.stringify(app.metadata.name)}`,
        );
      if (matchesAllowed(name))
        return deny(
          `is itself one of the allowedParentProjects of Application ${JSON.stringify(app.metadata.name)}; a self-service Application cannot replace a parent project`,
        );
    }
    const chain = ProjectChain.resolve(name, after);
    if (!chain.ok) return deny(chain.reason);
    // An AppProject delivered unchanged was bounded when it last changed: a parent narrowed since
    // refuses at use (the intersection), not the delivering Application's every sync.
    const stored = lookup(name);
    const unchanged = stored !== undefined && canonical(stored.spec) === canonical(project.spec);
    const wider = unchanged ? [] : projectBoundIssues(project, after, clusters);
    if (wider.length > 0) return deny(`is wider than its parent chain: ${formatIssues(wider)}`);
    return {
      project: name,
      allowed: true,
      reason: `AppProject ${JSON.stringify(name)} is bounded by ${chain.chain.names.slice(1).join(' -> ') || 'no parent'}`,
    };
  });
}

/** JSON with sorted keys: a stored manifest (jsonb reorders keys) compares equal to the same one delivered. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
