// The parentProject chain (self-service AppProjects, proposal 001): a project's effective
// restrictions are the intersection of its own and every ancestor's; any link that denies,
// denies, and the answer names the project that denied. A missing project, a missing parent, a
// cycle or an invalid project anywhere in the chain is an error that refuses the sync.
import { formatIssues } from '../issues.js';
import type { AppProject } from '../manifests/schemas.js';
import {
  compileProject,
  type CompiledDestination,
  type CompiledGroupKind,
  type CompiledProject,
  type NegatableGlob,
} from './compile.js';
import { normalizeRepoUrl } from '../repository/repo-url.js';

/** Finds an AppProject by name (AppProjects live in the control-plane namespace). */
export type ProjectLookup = (name: string) => AppProject | undefined;

export type ChainErrorCode = 'project-not-found' | 'parent-not-found' | 'cycle' | 'invalid-project';

export type ChainResolution =
  | { readonly ok: true; readonly chain: ProjectChain }
  | {
      readonly ok: false;
      readonly code: ChainErrorCode;
      readonly reason: string;
      readonly path: readonly string[];
    };

/** Outcome of one restriction along the chain. */
export interface ChainCheck {
  readonly allowed: boolean;
  /** The project that denied (the first one, from the Application's project upwards). */
  readonly deniedBy?: string;
  readonly reason: string;
}

/** Longest chain followed; deeper is refused as if it were a cycle (it is a mistake either way). */
export const MAX_CHAIN_DEPTH = 64;

export class ProjectChain {
  /** [0] is the Application's project, the last is the root (the project without parentProject). */
  private constructor(readonly projects: readonly CompiledProject[]) {}

  get names(): string[] {
    return this.projects.map((p) => p.name);
  }

  get project(): CompiledProject {
    return this.projects[0]!;
  }

  static resolve(name: string, lookup: ProjectLookup): ChainResolution {
    const path: string[] = [];
    const projects: CompiledProject[] = [];
    let next: string | undefined = name;
    while (next !== undefined) {
      if (path.includes(next)) {
        return {
          ok: false,
          code: 'cycle',
          reason: `project chain has a cycle: ${[...path, next].join(' -> ')}`,
          path,
        };
      }
      if (path.length >= MAX_CHAIN_DEPTH) {
        return {
          ok: false,
          code: 'cycle',
          reason: `project chain is deeper than ${MAX_CHAIN_DEPTH}: ${path.slice(0, 5).join(' -> ')} -> …`,
          path,
        };
      }
      const found = lookup(next);
      if (found === undefined) {
        const child = path[path.length - 1];
        return child === undefined
          ? {
              ok: false,
              code: 'project-not-found',
              reason: `project ${JSON.stringify(next)} not found`,
              path,
            }
          : {
              ok: false,
              code: 'parent-not-found',
              reason: `project ${JSON.stringify(child)} names parentProject ${JSON.stringify(next)}, which does not exist`,
              path: [...path, next],
            };
      }
      const compiled = compileProject(found);
      path.push(next);
      if (compiled.issues.length > 0) {
        return {
          ok: false,
          code: 'invalid-project',
          reason: `project ${JSON.stringify(next)} is invalid: ${formatIssues(compiled.issues)}`,
          path,
        };
      }
      projects.push(compiled);
      next = compiled.parent;
    }
    return { ok: true, chain: new ProjectChain(projects) };
  }

  private every(
    test: (p: CompiledProject) => boolean,
    describeDenial: (p: CompiledProject) => string,
    allowedReason: string,
  ): ChainCheck {
    for (const p of this.projects) {
      if (!test(p)) return { allowed: false, deniedBy: p.name, reason: describeDenial(p) };
    }
    return { allowed: true, reason: allowedReason };
  }

  private via(p: CompiledProject): string {
    return p === this.projects[0]
      ? `project ${JSON.stringify(p.name)}`
      : `parent project ${JSON.stringify(p.name)} (of ${JSON.stringify(this.projects[0]!.name)})`;
  }

  /** Argo CD's IsSourcePermitted along the chain. */
  permitsSource(repoURL: string): ChainCheck {
    const normalized = normalizeRepoUrl(repoURL);
    return this.every(
      (p) => listPermits(p.sourceRepos, normalized),
      (p) => `source repository ${JSON.stringify(repoURL)} is not permitted by ${this.via(p)} (sourceRepos)`,
      `source repository ${JSON.stringify(repoURL)} is permitted by ${this.names.join(', ')}`,
    );
  }

  /**
   * Argo CD's IsDestinationPermitted along the chain; `name` is the cluster's name when known and
   * `project` the project a project-scoped cluster belongs to (permitOnlyProjectScopedClusters).
   */
  permitsDestination(dest: {
    server: string;
    name: string | undefined;
    namespace: string;
    project?: string | undefined;
  }): ChainCheck {
    const where = `server ${JSON.stringify(dest.server)}${dest.name ? ` (cluster ${JSON.stringify(dest.name)})` : ''}, namespace ${JSON.stringify(dest.namespace)}`;
    const listed = this.every(
      (p) => destinationsPermit(p.destinations, dest),
      (p) => `destination ${where} is not permitted by ${this.via(p)} (destinations)`,
      `destination ${where} is permitted by ${this.names.join(', ')}`,
    );
    if (!listed.allowed) return listed;
    return this.every(
      (p) => p.spec.permitOnlyProjectScopedClusters !== true || dest.project === p.name,
      (p) =>
        `destination ${where} is not permitted by ${this.via(p)}: permitOnlyProjectScopedClusters is set and the cluster is ${dest.project ? `scoped to project ${JSON.stringify(dest.project)}` : 'not project-scoped'}`,
      listed.reason,
    );
  }

  /** Argo CD's IsGroupKindPermitted along the chain. */
  permitsResource(
    gk: { group: string; kind: string; name?: string | undefined },
    namespaced: boolean,
  ): ChainCheck {
    const what = `${namespaced ? 'namespaced' : 'cluster-scoped'} resource ${gk.group === '' ? '' : `${gk.group}/`}${gk.kind}${gk.name ? ` ${JSON.stringify(gk.name)}` : ''}`;
    return this.every(
      (p) => groupKindPermitted(p, gk, namespaced),
      (p) =>
        `${what} is not permitted by ${this.via(p)} (${namespaced ? 'namespaceResourceWhitelist/Blacklist' : 'clusterResourceWhitelist/Blacklist'})`,
      `${what} is permitted by ${this.names.join(', ')}`,
    );
  }

  /** Applications outside the control-plane namespace need every project's sourceNamespaces to allow them. */
  permitsApplicationNamespace(appNamespace: string, controlNamespace: string): ChainCheck {
    return this.every(
      (p) =>
        appNamespace === controlNamespace || p.sourceNamespaces.some((g) => g?.match(appNamespace) === true),
      (p) =>
        `Applications in namespace ${JSON.stringify(appNamespace)} are not permitted by ${this.via(p)} (sourceNamespaces)`,
      `Application namespace ${JSON.stringify(appNamespace)} is permitted`,
    );
  }

  /** True when any project of the chain declares destinationServiceAccounts. */
  get declaresServiceAccounts(): boolean {
    return this.projects.some((p) => p.serviceAccountRules.length > 0);
  }
}

/**
 * Lists with `!` deny entries (sourceRepos, destinations) follow Argo CD's documented rule: a
 * value is permitted when some allow entry (one without `!`) matches it AND no deny entry rejects
 * it. (Argo CD's code also counts a deny entry that does not reject as a match, so a list of only
 * deny entries permits everything; Capstan does not: deny unless allowed.)
 */
function listPermits(list: readonly NegatableGlob[], value: string): boolean {
  let allowed = false;
  for (const g of list) {
    const m = g.glob?.match(value) ?? false;
    if (g.deny) {
      if (m) return false;
    } else if (m) {
      allowed = true;
    }
  }
  return allowed;
}

function plainMatches(g: NegatableGlob | undefined, value: string | undefined): boolean {
  return g !== undefined && !g.deny && !!value && g.glob?.match(value) === true;
}

function denyRejects(g: NegatableGlob | undefined, value: string | undefined): boolean {
  return g !== undefined && g.deny && (g.glob?.match(value ?? '') ?? false);
}

/**
 * An entry with any `!` field is a deny rule: it rejects a destination when any of its negated
 * fields matches (as Argo CD rejects, whatever the entry's other fields say). An entry without
 * `!` permits a destination whose server or cluster name, and namespace, match.
 */
function destinationsPermit(
  list: readonly CompiledDestination[],
  dest: { server: string; name: string | undefined; namespace: string },
): boolean {
  let allowed = false;
  for (const d of list) {
    const isDeny = !!(d.server?.deny || d.name?.deny || d.namespace.deny);
    if (isDeny) {
      if (
        denyRejects(d.server, dest.server) ||
        denyRejects(d.name, dest.name) ||
        denyRejects(d.namespace, dest.namespace)
      )
        return false;
      continue;
    }
    const clusterMatched = plainMatches(d.server, dest.server) || plainMatches(d.name, dest.name);
    const namespaceMatched = d.namespace.glob?.match(dest.namespace) === true;
    if (clusterMatched && namespaceMatched) allowed = true;
  }
  return allowed;
}

type ResourceRef = { group: string; kind: string; name?: string | undefined };

function inList(list: readonly CompiledGroupKind[], gk: ResourceRef): boolean {
  return list.some(
    (item) =>
      item.kind?.match(gk.kind) === true &&
      item.group?.match(gk.group) === true &&
      (item.raw.name === undefined ||
        item.raw.name === '' ||
        (gk.name !== undefined && item.name?.match(gk.name) === true)),
  );
}

function groupKindPermitted(p: CompiledProject, gk: ResourceRef, namespaced: boolean): boolean {
  if (namespaced) {
    const white = p.namespaceResourceWhitelist;
    const black = p.namespaceResourceBlacklist;
    // absent whitelist: every namespaced kind; an empty one: none (as in Argo CD)
    const whitelisted = white === undefined || (white.length > 0 && inList(white, gk));
    return whitelisted && !(black !== undefined && black.length > 0 && inList(black, gk));
  }
  const white = p.clusterResourceWhitelist ?? [];
  const black = p.clusterResourceBlacklist ?? [];
  return white.length > 0 && inList(white, gk) && !(black.length > 0 && inList(black, gk));
}
