// argocd-cm's resource.exclusions and resource.inclusions, with Argo CD's semantics
// (util/settings/filtered_resource.go, resources_filter.go): each entry matches a group, a kind and
// a cluster URL by globs, an empty or missing list matching everything; a resource is excluded when
// an exclusion (Argo's core ones included) matches it, or when inclusions are given and none
// matches it. Excluded kinds are neither synced nor compared: the Application says so with Argo's
// ExcludedResourceWarning. Patterns match through @capstan/glob (bounded), never a RegExp.
import { globMatch } from '@capstan/glob';

export interface FilteredResource {
  apiGroups?: string[];
  kinds?: string[];
  clusters?: string[];
}

export interface ResourceFilter {
  exclusions: readonly FilteredResource[];
  inclusions: readonly FilteredResource[];
}

/** Argo CD's coreExcludedResources: never managed, whatever argocd-cm says. */
export const CORE_EXCLUDED_RESOURCES: readonly FilteredResource[] = [
  { apiGroups: ['events.k8s.io', 'metrics.k8s.io'] },
  { apiGroups: [''], kinds: ['Event'] },
];

const FIELDS = ['apiGroups', 'kinds', 'clusters'] as const;
const MAX_ENTRIES = 256;
const MAX_PATTERNS = 256;

/** Reads a resource.exclusions/inclusions value (already parsed YAML); a problem names the entry. */
export function readFilteredResources(value: unknown): { value: FilteredResource[] } | { problem: string } {
  if (value === null || value === undefined || value === '') return { value: [] };
  if (!Array.isArray(value)) return { problem: 'must be a list of {apiGroups, kinds, clusters}' };
  if (value.length > MAX_ENTRIES) return { problem: `must have at most ${MAX_ENTRIES} entries` };
  const out: FilteredResource[] = [];
  for (const [i, entry] of value.entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return { problem: `[${i}]: must be a map of apiGroups, kinds, clusters` };
    const resource: FilteredResource = {};
    for (const [field, list] of Object.entries(entry as Record<string, unknown>)) {
      if (!(FIELDS as readonly string[]).includes(field))
        return {
          problem: `[${i}]: unknown field ${JSON.stringify(field)} (expected apiGroups, kinds, clusters)`,
        };
      if (list === null) continue;
      if (!Array.isArray(list) || list.some((p) => typeof p !== 'string'))
        return { problem: `[${i}].${field}: must be a list of strings` };
      if (list.length > MAX_PATTERNS)
        return { problem: `[${i}].${field}: must have at most ${MAX_PATTERNS} patterns` };
      for (const pattern of list as string[]) {
        try {
          globMatch(pattern, '');
        } catch (err) {
          return { problem: `[${i}].${field}: ${(err as Error).message}` };
        }
      }
      resource[field as (typeof FIELDS)[number]] = list as string[];
    }
    out.push(resource);
  }
  return { value: out };
}

function matchesAny(patterns: readonly string[] | undefined, text: string): boolean {
  return !patterns || patterns.length === 0 || patterns.some((p) => globMatch(p, text));
}

function matches(r: FilteredResource, group: string, kind: string, cluster: string): boolean {
  return matchesAny(r.apiGroups, group) && matchesAny(r.kinds, kind) && matchesAny(r.clusters, cluster);
}

/** Argo CD's ResourcesFilter.IsExcludedResource. */
export function isExcludedResource(
  filter: ResourceFilter,
  group: string,
  kind: string,
  cluster: string,
): boolean {
  for (const r of [...CORE_EXCLUDED_RESOURCES, ...filter.exclusions])
    if (matches(r, group, kind, cluster)) return true;
  if (filter.inclusions.length === 0) return false;
  return !filter.inclusions.some((r) => matches(r, group, kind, cluster));
}

/** Argo CD's ExcludedResourceWarning message for one declared object. */
export function excludedResourceMessage(group: string, kind: string, name: string): string {
  return `Resource ${group}/${kind} ${name} is excluded in the settings`;
}
