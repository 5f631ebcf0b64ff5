// A project's effective restrictions: what its parentProject chain lets its Applications do, as
// lists a person can read (the project page, issue 14). Nothing is decided here that chain.ts and
// bounds.ts do not decide already: at use every link must allow (ProjectChain), so what is allowed
// is at most the nearest restricting link's allow entries, each kept within its ancestors
// (projectBoundIssues: an entry not certainly within says which ancestor bounds it and why), minus
// every link's deny entries. destinationServiceAccounts are every link's rules, nearest first: a
// destination takes the nearest project's first matching rule, which must agree with its parents'.
import type { AppProject, ClusterRef } from '../manifests/schemas.js';
import type { ClusterDirectory } from '../sync/destination.js';
import { projectBoundIssues } from './bounds.js';
import { ProjectChain, type ProjectLookup } from './chain.js';
import type { CompiledDestination, CompiledGroupKind } from './compile.js';

export interface EffectiveEntry {
  /** The entry as its project writes it (a repository glob, `server / namespace`, `group/Kind`). */
  readonly value: string;
  /** The link of the chain that declares it. */
  readonly project: string;
  readonly deny: boolean;
  /** Set when the entry is not certainly within the parents: the bound rule's message. */
  readonly boundedBy?: string;
}

export interface EffectiveRestrictions {
  /** The project, then its parents up to the root. */
  readonly chain: readonly string[];
  readonly sourceRepos: readonly EffectiveEntry[];
  readonly destinations: readonly EffectiveEntry[];
  readonly clusterResources: readonly EffectiveEntry[];
  /** True when no link has a namespaceResourceWhitelist: every namespaced kind (less the denies). */
  readonly everyNamespacedResource: boolean;
  readonly namespaceResources: readonly EffectiveEntry[];
  readonly destinationServiceAccounts: readonly EffectiveEntry[];
}

export type EffectiveResolution =
  | { readonly ok: true; readonly restrictions: EffectiveRestrictions }
  | { readonly ok: false; readonly reason: string };

const destinationValue = (d: CompiledDestination) =>
  `${d.server?.raw ?? `name ${d.name?.raw ?? ''}`} / ${d.namespace.raw}`;
const kindValue = ({ raw }: CompiledGroupKind) =>
  `${raw.group || 'core'}/${raw.kind}${raw.name ? ` named ${raw.name}` : ''}`;
const isDenyDestination = (d: CompiledDestination) => !!(d.server?.deny || d.name?.deny || d.namespace.deny);

/** The effective restrictions of project `name` under its chain, as `lookup` finds the projects. */
export function effectiveRestrictions(
  name: string,
  lookup: ProjectLookup,
  clusters: ClusterDirectory | readonly ClusterRef[] = [],
): EffectiveResolution {
  const resolved = ProjectChain.resolve(name, lookup);
  if (!resolved.ok) return { ok: false, reason: resolved.reason };
  const links = resolved.chain.projects;
  // Each link's entries that are not certainly within its own parents, by field path.
  const bounded = links.map((p) => {
    const issues = projectBoundIssues(lookup(p.name) as AppProject, lookup, clusters);
    return new Map(issues.map((i) => [i.path, i.message]));
  });
  const entry = (k: number, path: string, value: string, deny: boolean): EffectiveEntry => {
    const why = deny ? undefined : bounded[k]!.get(path);
    return { value, project: links[k]!.name, deny, ...(why ? { boundedBy: why } : {}) };
  };
  const self = links[0]!;
  const nsWhite = links.findIndex((p) => p.namespaceResourceWhitelist !== undefined);
  return {
    ok: true,
    restrictions: {
      chain: resolved.chain.names,
      sourceRepos: [
        ...self.sourceRepos.flatMap((g, i) =>
          g.deny ? [] : [entry(0, `spec.sourceRepos[${i}]`, g.raw, false)],
        ),
        ...links.flatMap((p, k) => p.sourceRepos.filter((g) => g.deny).map((g) => entry(k, '', g.raw, true))),
      ],
      destinations: [
        ...self.destinations
          .filter((d) => !isDenyDestination(d))
          .map((d) => entry(0, `spec.destinations[${d.index}]`, destinationValue(d), false)),
        ...links.flatMap((p, k) =>
          p.destinations.filter(isDenyDestination).map((d) => entry(k, '', destinationValue(d), true)),
        ),
      ],
      clusterResources: [
        ...(self.clusterResourceWhitelist ?? []).map((g, i) =>
          entry(0, `spec.clusterResourceWhitelist[${i}]`, kindValue(g), false),
        ),
        ...links.flatMap((p, k) =>
          (p.clusterResourceBlacklist ?? []).map((g) => entry(k, '', kindValue(g), true)),
        ),
      ],
      everyNamespacedResource: nsWhite < 0,
      namespaceResources: [
        ...(nsWhite < 0 ? [] : links[nsWhite]!.namespaceResourceWhitelist!).map((g, i) =>
          entry(nsWhite, `spec.namespaceResourceWhitelist[${i}]`, kindValue(g), false),
        ),
        ...links.flatMap((p, k) =>
          (p.namespaceResourceBlacklist ?? []).map((g) => entry(k, '', kindValue(g), true)),
        ),
      ],
      destinationServiceAccounts: links.flatMap((p, k) =>
        p.serviceAccountRules.map((r) =>
          entry(
            k,
            `spec.destinationServiceAccounts[${r.index}]`,
            `${r.server} / ${r.namespace} → ${r.defaultServiceAccount}`,
            false,
          ),
        ),
      ),
    },
  };
}
