// `capstan app sync --resource`, as `argocd app sync --resource`: each value is GROUP:KIND:NAME or
// GROUP:KIND:NAMESPACE/NAME, `!` in front excludes, fields may be blank and `*` matches anything.
// As Argo CD's CLI does, the patterns are matched against the Application's resources
// (status.resources) and the exact ones are sent; none matching is an error.
import type { apiv1 } from '@capstan/proto';
import { CliError } from '../errors.js';

export interface ResourcePattern {
  group: string;
  kind: string;
  name: string;
  namespace: string;
  exclude: boolean;
}

/** Argo CD's parseSelectedResources, with its messages. */
export function parseResourceFlags(values: readonly string[]): ResourcePattern[] {
  return values.map((value) => {
    const exclude = value.startsWith('!');
    const resource = exclude ? value.slice(1) : value;
    const fields = resource.split(':');
    if (fields.length !== 3)
      throw new CliError(`resource should have GROUP:KIND:NAME, but instead got: ${resource}`, 2);
    const [group, kind, last] = fields as [string, string, string];
    let name = last;
    let namespace = '';
    if (last.includes('/')) {
      const parts = last.split('/');
      if (parts.length !== 2)
        throw new CliError(
          `resource with namespace should have GROUP:KIND:NAMESPACE/NAME, but instead got: ${resource}`,
          2,
        );
      [namespace, name] = parts as [string, string];
    }
    return { group, kind, name, namespace, exclude };
  });
}

type Res = Pick<apiv1.ResourceStatus, 'group' | 'kind' | 'name' | 'namespace'>;

/** Argo CD's SyncOperationResource.Compare: `*` matches any value, an empty namespace any namespace. */
function compare(p: ResourcePattern, r: Res): boolean {
  return (
    (p.group === '*' || p.group === r.group) &&
    (p.kind === '*' || p.kind === r.kind) &&
    (p.name === '*' || p.name === r.name) &&
    (p.namespace === '*' || p.namespace === '' || p.namespace === r.namespace)
  );
}

/** Argo CD's IncludeResource: any include rule must match (none: all), and no exclude rule may. */
export function includeResource(r: Res, patterns: readonly ResourcePattern[]): boolean {
  const includes = patterns.filter((p) => !p.exclude);
  const included = includes.length === 0 || includes.some((p) => compare(p, r));
  return included && !patterns.some((p) => p.exclude && compare(p, r));
}

/** The Application's resources the patterns select, as the exact list a sync request carries. */
export function selectedResources(
  values: readonly string[],
  resources: readonly Res[],
): apiv1.SyncOperationResource[] {
  if (values.length === 0) return [];
  const patterns = parseResourceFlags(values);
  const selected = resources
    .filter((r) => includeResource(r, patterns))
    .map((r) => ({ group: r.group, kind: r.kind, name: r.name, namespace: r.namespace }));
  if (selected.length === 0)
    throw new CliError(`No matching app resources found for resource filter: ${values.join(', ')}`);
  return selected;
}
