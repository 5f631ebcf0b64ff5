// The sync's step for control-plane objects: hand them (and the wish to prune what the Application
// delivered before) to the api, and record each object's result next to the cluster objects', so
// `capstan app get` shows `AppProject team-x: Synced` or the reason it was refused. One refusal
// fails the sync; the api then wrote nothing.
import type { ResourceResult } from '../decision/audit.js';
import type { KubeObject } from '../manifests/manifest-source.js';
import type { DeliveredObjects } from './api-delivery.js';
import { ARGO_GROUP } from './control-plane-objects.js';

export async function deliverControlPlane(
  delivery: DeliveredObjects,
  request: {
    application: { namespace: string; name: string };
    operationId: string;
    objects: readonly KubeObject[];
    prune: boolean;
    dryRun: boolean;
    cascadeDelete: boolean;
  },
  record: (r: ResourceResult) => void,
): Promise<{ ok: true; delivered: number; pruned: number } | { ok: false; reason: string }> {
  const { applied, results } = await delivery.deliver(request);
  for (const r of results) {
    record({
      verb: r.action === 'prune' || r.action === 'prune-skipped' ? 'prune' : 'apply',
      group: ARGO_GROUP,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      status: r.status,
      httpStatus: null,
      message: `${request.dryRun ? 'dry run: ' : ''}${r.message}`,
      identity: `application:${request.application.namespace}/${request.application.name}`,
    });
  }
  if (!applied) {
    const refused = results.filter((r) => r.action === 'refused').map((r) => r.message);
    return { ok: false, reason: refused.join('; ') || 'the api refused the delivered objects' };
  }
  return {
    ok: true,
    delivered: results.filter((r) => r.action !== 'prune' && r.action !== 'prune-skipped').length,
    pruned: results.filter((r) => r.action === 'prune').length,
  };
}
