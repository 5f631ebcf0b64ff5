// Which Application owns an object, the way Argo CD records it (pure, no I/O): every object a sync
// applies carries the annotation `argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<namespace>/<name>`,
// where <app> is the Application's instance name (its name, or `<namespace>_<name>` for an
// Application outside the control-plane namespace, as Argo CD's InstanceName). A live object
// tracked by another Application is shared: Argo's SharedResourceWarning, or a failed sync with
// `FailOnSharedResource=true`. Prune and cascade deletion delete an object only when its live
// tracking id names this Application and this very object (a copied annotation does not count).
import { TRACKING_ANNOTATION, trackingAppName, trackingId as formatTrackingId } from '@capstan/policy';
import type { KubeObject } from '../manifests/manifest-source.js';
import { groupOf, type ObjectRef } from './plan.js';

export { TRACKING_ANNOTATION };

export interface TrackingContext {
  app: { namespace: string; name: string };
  controlNamespace: string;
  /** The Application's instance name (Argo CD's InstanceName: what a tracking id starts with). */
  instance: string;
  /** Its qualified name for messages: `name`, or `namespace/name` outside the control namespace. */
  qualifiedName: string;
  /** The destination namespace: Argo CD writes it for objects without one (cluster-scoped ones too). */
  destinationNamespace: string;
}

export function trackingContext(
  app: { namespace: string; name: string },
  controlNamespace: string,
  destinationNamespace: string,
): TrackingContext {
  const ref = { namespace: app.namespace || controlNamespace, name: app.name };
  const home = ref.namespace === controlNamespace;
  return {
    app: ref,
    controlNamespace,
    instance: trackingAppName(ref, controlNamespace),
    qualifiedName: home ? app.name : `${app.namespace}/${app.name}`,
    destinationNamespace,
  };
}

/**
 * Argo CD's BuildAppInstanceValue, in @capstan/policy's one format; an object without a namespace
 * gets the destination's, as Argo CD's UnstructuredToAppInstanceValue does.
 */
export function trackingId(ctx: TrackingContext, ref: ObjectRef): string {
  const object = {
    group: groupOf(ref.apiVersion),
    kind: ref.kind,
    namespace: ref.namespace ?? ctx.destinationNamespace,
    name: ref.name,
  };
  return formatTrackingId(ctx.app, object, ctx.controlNamespace);
}

export interface ParsedTrackingId {
  instance: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Argo CD's ParseAppInstanceValue; undefined for a value that does not follow the format. */
export function parseTrackingId(value: string): ParsedTrackingId | undefined {
  const first = value.indexOf(':');
  const second = first < 0 ? -1 : value.indexOf(':', first + 1);
  if (second < 0) return undefined;
  const gk = value.slice(first + 1, second).split('/');
  const nn = value.slice(second + 1).split('/');
  if (gk.length !== 2 || nn.length !== 2) return undefined;
  return { instance: value.slice(0, first), group: gk[0]!, kind: gk[1]!, namespace: nn[0]!, name: nn[1]! };
}

/** The object with this Application's tracking id among its annotations. */
export function withTracking(object: KubeObject, ctx: TrackingContext, ref: ObjectRef): KubeObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      annotations: { ...(object.metadata.annotations ?? {}), [TRACKING_ANNOTATION]: trackingId(ctx, ref) },
    },
  };
}

export type Ownership =
  | { kind: 'owned' }
  /** Another Application's tracking id (instance names it). */
  | { kind: 'other'; instance: string }
  /** No tracking id, or one that does not describe this object (copied from elsewhere). */
  | { kind: 'untracked' };

/** Who the live object's tracking id says owns it, compared with this Application. */
export function ownershipOf(live: unknown, ctx: TrackingContext, ref: ObjectRef): Ownership {
  const annotations = (live as { metadata?: { annotations?: Record<string, unknown> } } | undefined)?.metadata
    ?.annotations;
  const value = annotations?.[TRACKING_ANNOTATION];
  if (typeof value !== 'string') return { kind: 'untracked' };
  const parsed = parseTrackingId(value);
  if (!parsed) return { kind: 'untracked' };
  const expected = parseTrackingId(trackingId(ctx, ref))!;
  const sameObject =
    parsed.group === expected.group &&
    parsed.kind === expected.kind &&
    parsed.name === expected.name &&
    parsed.namespace === expected.namespace;
  if (!sameObject) return { kind: 'untracked' };
  return parsed.instance === ctx.instance ? { kind: 'owned' } : { kind: 'other', instance: parsed.instance };
}

/** Argo CD's SharedResourceWarning condition message. */
export function sharedResourceMessage(ctx: TrackingContext, ref: ObjectRef, otherInstance: string): string {
  return `${ref.kind}/${ref.name} is part of applications ${ctx.qualifiedName} and ${otherInstance}`;
}
