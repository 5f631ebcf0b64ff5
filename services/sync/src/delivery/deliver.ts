// The sync's step for control-plane objects: hand them (and the wish to prune what the Application
// delivered before) to the api, and record each object's result next to the cluster objects', so
// `capstan app get` shows `AppProject team-x: Synced` or the reason it was refused. A refusal fails
// the sync: decided before writing, nothing was written; an ApplicationSet refused when written (the
// last step) leaves the projects and Applications before it written, as a later sync wave would.
import type { ResourceResult } from '../decision/audit.js';
import type { DeliveredObjects, DeliverRequest } from './api-delivery.js';
import { ARGO_GROUP } from './control-plane-objects.js';

export async function deliverControlPlane(
  delivery: DeliveredObjects,
  request: DeliverRequest,
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
