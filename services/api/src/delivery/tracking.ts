// Which Application delivered a control-plane object (an AppProject or Application from git), as
// Argo CD records it: the tracking-id annotation `<app>:<group>/<kind>:<namespace>/<name>` (the
// app as `<namespace>_<name>` when it lives outside the control namespace). The api stamps it on
// every object it writes for a delivering Application and strips it from what users write, so the
// annotation on a stored object is always the api's own and ownership is never forged.
import {
  DEFAULT_CONTROL_NAMESPACE,
  TRACKING_ANNOTATION,
  trackedBy,
  trackingId,
  type AppRef,
} from '@capstan/policy';

export { TRACKING_ANNOTATION, trackingAppName, type AppRef } from '@capstan/policy';
export const ARGO_GROUP = 'argoproj.io';

interface Meta {
  name: string;
  namespace?: string | undefined;
  annotations?: Record<string, string> | undefined;
}

/** The delivering Application named by the object's tracking id (none: not delivered). */
export function deliveredBy(meta: Meta): AppRef | undefined {
  return trackedBy(meta.annotations?.[TRACKING_ANNOTATION]);
}

export const sameApp = (a: AppRef | undefined, b: AppRef): boolean =>
  a !== undefined && a.namespace === b.namespace && a.name === b.name;

export const appKey = (a: AppRef): string => `${a.namespace}/${a.name}`;

/** The object with the delivering Application's tracking id (and no other). */
export function withTracking<T extends { kind?: string; metadata: Meta }>(
  obj: T,
  kind: string,
  app: AppRef,
): T {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: {
        ...obj.metadata.annotations,
        [TRACKING_ANNOTATION]: trackingId(app, {
          group: ARGO_GROUP,
          kind,
          namespace: obj.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
          name: obj.metadata.name,
        }),
      },
    },
  };
}

/** What a user writes never claims a delivering Application. */
export function withoutTracking<T extends { metadata: Meta }>(obj: T): T {
  const annotations = obj.metadata.annotations;
  if (!annotations || !(TRACKING_ANNOTATION in annotations)) return obj;
  const { [TRACKING_ANNOTATION]: _dropped, ...rest } = annotations;
  const metadata = { ...obj.metadata };
  if (Object.keys(rest).length > 0) metadata.annotations = rest;
  else delete metadata.annotations;
  return { ...obj, metadata };
}

/**
 * The refusal of a write to a delivered object by anyone but its delivering Application (a user,
 * or another Application): git is where it changes.
 */
export function deliveredRefusal(kind: string, name: string, owner: AppRef): string {
  return `${kind} ${name} is managed by Application ${appKey(owner)} (delivered from git): change it in that Application's repository`;
}
