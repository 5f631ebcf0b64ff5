// The self-service bound check (issue 12): a child project may not list a source repository,
// destination, resource kind, source namespace or destinationServiceAccounts entry that its
// parent chain could never allow. Enforcement at use stays the intersection along the chain
// (chain.ts); this check only makes a too-wide child fail when it is written or delivered, with
// the field path, the value and the ancestor that excludes it, instead of at its first sync.
//
// Containment is decided conservatively (globWithin of @capstan/glob): an entry passes only when
// it is certainly within an ancestor's entry. An ancestor's deny entries (`!…` in sourceRepos and
// destinations, the resource blacklists) must be certainly disjoint from the child's entry, or be
// restated by the child (the same deny, or a wider one, in the child's own list). Fields the child
// leaves absent are not checked: absent means "no own restriction", and the chain still bounds it.
// The rules in words: docs/self-service.md "The bound rule".
import { globLiteral, globWithin, type Glob } from '@capstan/glob';
import type { PolicyIssue } from '../issues.js';
import type { AppProject, ClusterRef } from '../manifests/schemas.js';
import { ClusterDirectory } from '../sync/destination.js';
import { ProjectChain, type ProjectLookup } from './chain.js';
import {
  compileProject,
  type CompiledDestination,
  type CompiledGroupKind,
  type CompiledProject,
  type CompiledServiceAccountRule,
  type NegatableGlob,
} from './compile.js';

/**
 * The bound issues of `project` under its parentProject chain, as `lookup` finds the chain
 * (`project` itself as written replaces any stored version). No parent: none. An unresolvable
 * chain is one issue on spec.parentProject. `clusters` lets a destination named by server be
 * compared with an ancestor's destination named by cluster name and the other way round.
 */
export function projectBoundIssues(
  project: AppProject,
  lookup: ProjectLookup,
  clusters: ClusterDirectory | readonly ClusterRef[] = [],
): PolicyIssue[] {
  const parent = project.spec.parentProject;
  if (parent === undefined) return [];
  const child = compileProject(project);
  if (child.issues.length > 0) return []; // validation reports those
  const self = project.metadata.name;
  const resolved = ProjectChain.resolve(parent, (n) => (n === self ? project : lookup(n)));
  if (!resolved.ok) return [{ path: 'spec.parentProject', message: resolved.reason }];
  const ancestors = resolved.chain.projects;
  const dir = clusters instanceof ClusterDirectory ? clusters : new ClusterDirectory(clusters);
  return [
    ...repoIssues(child, ancestors),
    ...destinationIssues(child, ancestors, dir),
    ...sourceNamespaceIssues(child, ancestors),
    ...kindIssues(child, ancestors, false),
    ...kindIssues(child, ancestors, true),
    ...serviceAccountIssues(child, ancestors),
  ];
}

const q = JSON.stringify;
const by = (a: CompiledProject) => `ancestor project ${q(a.name)}`;

/** The first ancestor's objection to one entry, as an issue. */
function firstObjection(
  path: string,
  value: string,
  ancestors: readonly CompiledProject[],
  objection: (a: CompiledProject) => string | undefined,
): PolicyIssue[] {
  for (const a of ancestors) {
    const why = objection(a);
    if (why !== undefined) return [{ path, message: `${value} is not allowed by ${by(a)}: ${why}` }];
  }
  return [];
}

const isMatchAll = (g: NegatableGlob) => (g.deny ? g.raw.slice(1) : g.raw) === '*';

/** Child pattern `c` certainly within parent pattern `p` (both without their `!`). */
function negWithin(c: NegatableGlob | undefined, p: NegatableGlob | undefined, separators = ''): boolean {
  if (!c?.glob || !p?.glob) return false;
  if (isMatchAll(p)) return true;
  if (isMatchAll(c)) return false;
  return globWithin(c.glob.pattern, p.glob.pattern, { separators });
}

function literalOf(g: Glob | undefined): string | undefined {
  return g === undefined ? undefined : globLiteral(g.pattern);
}

// ---- sourceRepos ----

function repoIssues(child: CompiledProject, ancestors: readonly CompiledProject[]): PolicyIssue[] {
  return child.sourceRepos.flatMap((c, i) => {
    if (c.deny) return [];
    return firstObjection(`spec.sourceRepos[${i}]`, `source repository ${q(c.raw)}`, ancestors, (a) => {
      if (!a.sourceRepos.some((p) => !p.deny && negWithin(c, p, '/')))
        return 'it is not within any of its spec.sourceRepos';
      for (const d of a.sourceRepos) {
        if (!d.deny) continue;
        if (child.sourceRepos.some((x) => x.deny && negWithin(d, x, '/'))) continue;
        const lit = isMatchAll(c) ? undefined : literalOf(c.glob);
        if (lit !== undefined && d.glob?.match(lit) === false) continue;
        return `its spec.sourceRepos[${a.sourceRepos.indexOf(d)}] denies ${q(d.raw)}, which this pattern may match; add ${q(d.raw)} to this project's sourceRepos too`;
      }
      return undefined;
    });
  });
}

// ---- destinations ----

const isDenyDestination = (d: CompiledDestination) => !!(d.server?.deny || d.name?.deny || d.namespace.deny);

function destinationText(d: CompiledDestination): string {
  const cluster = [d.server ? `server ${q(d.server.raw)}` : '', d.name ? `name ${q(d.name.raw)}` : '']
    .filter((s) => s !== '')
    .join(', ');
  return `destination ${cluster}, namespace ${q(d.namespace.raw)}`;
}

function destinationIssues(
  child: CompiledProject,
  ancestors: readonly CompiledProject[],
  dir: ClusterDirectory,
): PolicyIssue[] {
  return child.destinations.flatMap((d) => {
    if (isDenyDestination(d)) return [];
    return firstObjection(`spec.destinations[${d.index}]`, destinationText(d), ancestors, (a) =>
      destinationObjection(child, d, a, dir),
    );
  });
}

function destinationObjection(
  child: CompiledProject,
  d: CompiledDestination,
  a: CompiledProject,
  dir: ClusterDirectory,
): string | undefined {
  const allows = a.destinations.filter((e) => !isDenyDestination(e));
  const serverLit = d.server ? literalOf(d.server.glob) : undefined;
  const nameLit = d.name ? literalOf(d.name.glob) : undefined;
  const byServer = serverLit === undefined ? undefined : dir.byServerUrl(serverLit);
  const byName = nameLit === undefined ? undefined : dir.byClusterName(nameLit);
  const covers = (e: CompiledDestination, side: 'server' | 'name'): boolean => {
    if (!negWithin(d.namespace, e.namespace)) return false;
    if (side === 'server')
      return negWithin(d.server, e.server) || (!!byServer && plainMatch(e.name, byServer.name));
    return negWithin(d.name, e.name) || (!!byName && plainMatch(e.server, byName.server));
  };
  if (d.server && !allows.some((e) => covers(e, 'server')))
    return 'it is not within any of its spec.destinations';
  if (d.name && !allows.some((e) => covers(e, 'name')))
    return 'it is not within any of its spec.destinations';
  // What this entry's destinations may have as server and cluster name: the literal value when
  // certain, else the pattern (a deny that is itself a literal the pattern cannot match is apart).
  const servers: Side[] = [
    ...(d.server ? [{ value: serverLit, glob: d.server.glob }] : []),
    ...(d.name ? [{ value: byName?.server }] : []),
  ];
  const names: Side[] = [
    ...(d.server ? [{ value: serverLit === undefined ? undefined : (byServer?.name ?? '') }] : []),
    ...(d.name ? [{ value: nameLit, glob: d.name.glob }] : []),
  ];
  const namespaces: Side[] = [{ value: literalOf(d.namespace.glob), glob: d.namespace.glob }];
  for (const e of a.destinations) {
    if (!isDenyDestination(e)) continue;
    if (child.destinations.some((x) => isDenyDestination(x) && sameDestination(x, e))) continue;
    const safe =
      (!e.server?.deny || unmatchedByAll(e.server, servers)) &&
      (!e.name?.deny || unmatchedByAll(e.name, names)) &&
      (!e.namespace.deny || unmatchedByAll(e.namespace, namespaces));
    if (!safe)
      return `its spec.destinations[${e.index}] (${destinationText(e).replace(/^destination /, '')}) denies what this entry may allow; add the same entry to this project's destinations too`;
  }
  return undefined;
}

function plainMatch(g: NegatableGlob | undefined, value: string): boolean {
  return !!g && !g.deny && g.glob?.match(value) === true;
}

interface Side {
  readonly value: string | undefined;
  readonly glob?: Glob | undefined;
}

/** The deny pattern certainly matches none of what each side may be. */
function unmatchedByAll(deny: NegatableGlob, sides: readonly Side[]): boolean {
  const denied = literalOf(deny.glob);
  return sides.every(
    (s) =>
      (s.value !== undefined && deny.glob?.match(s.value) === false) ||
      (denied !== undefined && s.glob !== undefined && !isMatchAllGlob(s.glob) && !s.glob.match(denied)),
  );
}

const isMatchAllGlob = (g: Glob) => g.pattern === '*';

function sameDestination(x: CompiledDestination, e: CompiledDestination): boolean {
  return (
    x.server?.raw === e.server?.raw && x.name?.raw === e.name?.raw && x.namespace.raw === e.namespace.raw
  );
}

// ---- sourceNamespaces ----

function sourceNamespaceIssues(child: CompiledProject, ancestors: readonly CompiledProject[]): PolicyIssue[] {
  const own = child.spec.sourceNamespaces ?? [];
  return own.flatMap((ns, i) =>
    firstObjection(`spec.sourceNamespaces[${i}]`, `source namespace ${q(ns)}`, ancestors, (a) => {
      const theirs = a.spec.sourceNamespaces ?? [];
      if (theirs.length === 0)
        return 'it has no spec.sourceNamespaces (only Applications in the control-plane namespace)';
      return theirs.some((p) => globWithin(ns, p))
        ? undefined
        : 'it is not within any of its spec.sourceNamespaces';
    }),
  );
}

// ---- resource kinds ----

function kindText(gk: CompiledGroupKind): string {
  const { group, kind, name } = gk.raw;
  return `${group === '' ? '' : `${group}/`}${kind}${name ? ` named ${q(name)}` : ''}`;
}

function kindIssues(
  child: CompiledProject,
  ancestors: readonly CompiledProject[],
  namespaced: boolean,
): PolicyIssue[] {
  const field = namespaced ? 'namespaceResourceWhitelist' : 'clusterResourceWhitelist';
  const blackField = namespaced ? 'namespaceResourceBlacklist' : 'clusterResourceBlacklist';
  const own = child[field] ?? [];
  const ownBlack = child[blackField] ?? [];
  return own.flatMap((c, i) =>
    firstObjection(
      `spec.${field}[${i}]`,
      `${namespaced ? 'namespaced' : 'cluster-scoped'} resource ${kindText(c)}`,
      ancestors,
      (a) => {
        const white = namespaced ? a.namespaceResourceWhitelist : (a.clusterResourceWhitelist ?? []);
        if (white !== undefined) {
          if (white.length === 0)
            return `its spec.${field} is ${namespaced ? 'empty' : 'empty or absent'}: it allows no ${namespaced ? 'namespaced' : 'cluster-scoped'} resources`;
          if (!white.some((e) => kindWithin(c, e))) return `it is not within any of its spec.${field}`;
        }
        const black = a[blackField] ?? [];
        for (const [j, b] of black.entries()) {
          if (ownBlack.some((x) => kindWithin(b, x)) || kindDisjoint(c, b)) continue;
          return `its spec.${blackField}[${j}] (${kindText(b)}) may exclude it; add that entry to this project's ${blackField} too`;
        }
        return undefined;
      },
    ),
  );
}

const KIND_SEPARATORS = { separators: '/' };

function kindWithin(c: CompiledGroupKind, p: CompiledGroupKind): boolean {
  if (!c.group || !c.kind || !p.group || !p.kind) return false;
  if (!globWithin(c.group.pattern, p.group.pattern, KIND_SEPARATORS)) return false;
  if (!globWithin(c.kind.pattern, p.kind.pattern, KIND_SEPARATORS)) return false;
  if (!p.raw.name) return true; // any name
  return !!c.raw.name && globWithin(c.raw.name, p.raw.name, KIND_SEPARATORS);
}

function kindDisjoint(c: CompiledGroupKind, b: CompiledGroupKind): boolean {
  const unmatched = (value: Glob | undefined, pattern: Glob | undefined) => {
    const lit = literalOf(value);
    return lit !== undefined && pattern?.match(lit) === false;
  };
  return (
    unmatched(c.group, b.group) || unmatched(c.kind, b.kind) || (!!b.raw.name && unmatched(c.name, b.name))
  );
}

// ---- destinationServiceAccounts ----

function serviceAccountIssues(child: CompiledProject, ancestors: readonly CompiledProject[]): PolicyIssue[] {
  return child.serviceAccountRules.flatMap((r) => {
    const path = `spec.destinationServiceAccounts[${r.index}]`;
    const value = `ServiceAccount ${q(r.defaultServiceAccount)} for server ${q(r.server)}, namespace ${q(r.namespace)}`;
    for (const a of ancestors) {
      for (const ar of a.serviceAccountRules) {
        if (rulesDisjoint(r, ar)) continue;
        const agrees =
          ar.defaultServiceAccount === r.defaultServiceAccount &&
          globWithin(r.server, ar.server) &&
          globWithin(r.namespace, ar.namespace);
        if (agrees) return [];
        return [
          {
            path,
            message: `${value} is not allowed by ${by(a)}: its spec.destinationServiceAccounts[${ar.index}] (server ${q(ar.server)}, namespace ${q(ar.namespace)}) resolves ${q(ar.defaultServiceAccount)} where this rule may apply; a child can restate but never change the ServiceAccount of its parents`,
          },
        ];
      }
    }
    if (r.account.kind === 'name' && r.account.name === 'default') return [];
    return [
      {
        path,
        message: `${value} is not allowed by the parent chain (${ancestors.map((a) => q(a.name)).join(' -> ')}): no ancestor has a destinationServiceAccounts rule for it, so the chain would use the default ServiceAccount; declare it in a parent first`,
      },
    ];
  });
}

function rulesDisjoint(r: CompiledServiceAccountRule, ar: CompiledServiceAccountRule): boolean {
  const apart = (lit: string | undefined, g: Glob | undefined) =>
    lit !== undefined && g?.match(lit) === false;
  return (
    apart(globLiteral(r.server), ar.serverGlob) ||
    apart(globLiteral(r.namespace), ar.namespaceGlob) ||
    apart(globLiteral(ar.server), r.serverGlob) ||
    apart(globLiteral(ar.namespace), r.namespaceGlob)
  );
}
