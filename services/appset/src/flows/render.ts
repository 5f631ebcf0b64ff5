// How a set leaves the service: Argo CD's ApplicationSet object (metadata with uid, creation time and
// resourceVersion = the stream version; spec as written; status with conditions and resources).
import type { AppSetRow } from '../sets/appset.repository.js';
import type { StoredAppSet } from '../sets/manifest.js';
import type { AppSetStatus } from '../sets/status.js';

export function renderAppSet(
  set: StoredAppSet,
  stored?: Pick<AppSetRow, 'uid' | 'version' | 'createdAt'> & { status: AppSetStatus },
): Record<string, unknown> {
  return {
    apiVersion: set.apiVersion,
    kind: set.kind,
    metadata: {
      ...set.metadata,
      ...(stored
        ? {
            uid: stored.uid,
            resourceVersion: String(stored.version),
            creationTimestamp: stored.createdAt.toISOString(),
          }
        : {}),
    },
    spec: set.spec,
    ...(stored && stored.status.conditions.length + stored.status.resources.length > 0
      ? {
          status: {
            conditions: stored.status.conditions,
            resources: stored.status.resources.map(({ project: _project, ...r }) => r),
          },
        }
      : {}),
  };
}
