// Which Application an object belongs to, as Argo CD records it: the annotation
// `argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<namespace>/<name>`, the app written as
// `<namespace>_<name>` when it lives outside the control namespace (Argo CD's annotation tracking).
// One format for every reader: the api (control-plane objects delivered from git), the sync
// service and the CLI.
import { DEFAULT_CONTROL_NAMESPACE } from '../manifests/schemas.js';

export const TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';

export interface AppRef {
  namespace: string;
  name: string;
}

export interface TrackedObject {
  group: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

/** The application part of a tracking id. */
export function trackingAppName(app: AppRef, controlNamespace = DEFAULT_CONTROL_NAMESPACE): string {
  return app.namespace === controlNamespace ? app.name : `${app.namespace}_${app.name}`;
}

export function trackingId(
  app: AppRef,
  object: TrackedObject,
  controlNamespace = DEFAULT_CONTROL_NAMESPACE,
): string {
  return `${trackingAppName(app, controlNamespace)}:${object.group}/${object.kind}:${object.namespace ?? ''}/${object.name}`;
}

/** The Application a tracking id names (none: not a tracking id). */
export function trackedBy(
  id: string | undefined,
  controlNamespace = DEFAULT_CONTROL_NAMESPACE,
): AppRef | undefined {
  if (!id) return undefined;
  const app = id.slice(0, id.indexOf(':'));
  if (!app) return undefined;
  const sep = app.indexOf('_');
  return sep < 0
    ? { namespace: controlNamespace, name: app }
    : { namespace: app.slice(0, sep), name: app.slice(sep + 1) };
}
