// A project's effective restrictions as the api answers them (ProjectService.GetEffectiveRestrictions):
// the entries of a link of the chain that the caller may not get are withheld (value blanked), and
// so is the bound rule's message of an entry under such a link (it quotes the ancestor's entries),
// so that a tenant learns no more of a parent it may not read than that it bounds the project.
import type { EffectiveEntry, EffectiveRestrictions } from '@capstan/policy';
import type { apiv1 } from '@capstan/proto';

export type EffectiveView = apiv1.EffectiveRestrictions;

export const WITHHELD_BOUND = 'not certainly within a parent project that you may not get';

export function withholdUnreadable(
  r: EffectiveRestrictions,
  mayGet: (project: string) => boolean,
): EffectiveView {
  const readable = new Map(r.chain.map((p) => [p, mayGet(p)]));
  const above = (p: string) => r.chain.slice(r.chain.indexOf(p) + 1);
  const view = (e: EffectiveEntry): apiv1.EffectiveEntry => {
    if (!readable.get(e.project))
      return { value: '', project: e.project, deny: e.deny, boundedBy: '', withheld: true };
    const hidden = e.boundedBy !== undefined && above(e.project).some((p) => !readable.get(p));
    return {
      value: e.value,
      project: e.project,
      deny: e.deny,
      boundedBy: hidden ? WITHHELD_BOUND : (e.boundedBy ?? ''),
      withheld: false,
    };
  };
  return {
    chain: [...r.chain],
    sourceRepos: r.sourceRepos.map(view),
    destinations: r.destinations.map(view),
    clusterResources: r.clusterResources.map(view),
    everyNamespacedResource: r.everyNamespacedResource,
    namespaceResources: r.namespaceResources.map(view),
    destinationServiceAccounts: r.destinationServiceAccounts.map(view),
  };
}
