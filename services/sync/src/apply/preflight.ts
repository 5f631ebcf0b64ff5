// Pre-flight access checks: before the first write, ask the API server (SelfSubjectAccessReview,
// through the same impersonating client) whether the sync identity may do every write the sync
// needs — patch (server-side apply) for each kind and namespace, delete for hooks with a delete
// policy and for what prune would remove. A refusal here fails the sync before anything changed,
// instead of half-way through a wave.
import type { ResourceResult } from '../decision/audit.js';
import type { TargetCluster } from '../kube/target-cluster.js';
import { groupOf, refKey, type ObjectRef, type PlannedObject, type SyncPlan } from './plan.js';

export type WriteVerb = 'patch' | 'create' | 'update' | 'delete';

interface Need {
  verb: WriteVerb;
  group: string;
  resource: string;
  namespace: string | undefined;
  /** Objects that need it, to name in the message. */
  examples: ObjectRef[];
}

export interface PreflightInput {
  plan: SyncPlan;
  createNamespace?: ObjectRef | undefined;
  /** Objects prune would delete (previously applied, no longer declared); empty without prune. */
  pruneCandidates: ObjectRef[];
  /** The verbs writing an object takes (default patch: server-side apply; Replace=true: create, update). */
  verbsOf?: (o: PlannedObject) => WriteVerb[];
}

export async function preflight(
  cluster: TargetCluster,
  input: PreflightInput,
  record: (r: ResourceResult) => void,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const needs = new Map<string, Need>();
  const plural = new Map<string, string | undefined>();
  const add = async (verb: Need['verb'], ref: ObjectRef) => {
    const kindKey = `${ref.apiVersion}/${ref.kind}`;
    if (!plural.has(kindKey)) plural.set(kindKey, (await cluster.scope(ref.apiVersion, ref.kind))?.resource);
    const resource = plural.get(kindKey);
    if (resource === undefined) return; // a kind the server no longer serves: nothing to check or delete
    const group = groupOf(ref.apiVersion);
    const key = `${verb} ${group}/${resource} ${ref.namespace ?? ''}`;
    const need = needs.get(key);
    if (need) need.examples.push(ref);
    else needs.set(key, { verb, group, resource, namespace: ref.namespace, examples: [ref] });
  };
  if (input.createNamespace) await add('patch', input.createNamespace);
  const all = [
    ...input.plan.preSync,
    ...input.plan.sync,
    ...input.plan.postSync,
    ...input.plan.syncFail,
  ].flat();
  for (const o of all) {
    for (const verb of input.verbsOf?.(o) ?? ['patch']) await add(verb, o.ref);
    if (o.hook && o.hook.deletePolicies.length > 0) await add('delete', o.ref);
  }
  for (const ref of input.pruneCandidates) await add('delete', ref);

  const denied: string[] = [];
  await Promise.all(
    [...needs.values()].map(async (n) => {
      const answer = await cluster.mayI(n.verb, n.group, n.resource, n.namespace);
      if (answer.allowed) return;
      const names = n.examples.slice(0, 5).map((r) => JSON.stringify(r.name));
      const more = n.examples.length > 5 ? ` and ${n.examples.length - 5} more` : '';
      const what = `${n.resource}${n.group ? `.${n.group}` : ''} ${names.join(', ')}${more}`;
      const where = n.namespace ? ` in namespace ${JSON.stringify(n.namespace)}` : ' (cluster-scoped)';
      const message = `${cluster.identityName} may not ${n.verb} ${what}${where} (pre-flight access review${answer.reason ? `: ${answer.reason}` : ''})`;
      denied.push(message);
      for (const r of n.examples) {
        record({
          verb: 'check',
          group: n.group,
          kind: r.kind,
          namespace: n.namespace ?? null,
          name: r.name,
          status: 'Refused',
          httpStatus: null,
          message,
        });
      }
    }),
  );
  return denied.length === 0 ? { ok: true } : { ok: false, reason: denied.sort().join('; ') };
}

/** What prune would delete: applied before, not declared now. */
export function pruneCandidates(previouslyApplied: ObjectRef[], plan: SyncPlan): ObjectRef[] {
  const keep = new Set(plan.resources.map((o) => refKey(o.ref)));
  return previouslyApplied.filter((r) => !keep.has(refKey(r)));
}
