// What one informer watches (pure): a kind's resource on one cluster, as one identity, in one
// namespace or at cluster scope. Informers are shared by every Application with the same key; a
// different identity never shares one, so nothing one ServiceAccount may read reaches another's view.
export interface WatchKey {
  server: string;
  /** The impersonated username, or '' for the cluster's control-plane credentials (impersonation off). */
  username: string;
  /** '' for cluster scope. */
  namespace: string;
  group: string;
  version: string;
  /** The plural resource name from discovery (configmaps). */
  resource: string;
  kind: string;
}

export function watchKeyText(k: WatchKey): string {
  return [k.server, k.username, k.namespace, k.group, k.version, k.resource].join('\u0000');
}

export function apiVersionOf(k: Pick<WatchKey, 'group' | 'version'>): string {
  return k.group === '' ? k.version : `${k.group}/${k.version}`;
}

/** The collection's path on the API server. */
export function collectionPath(k: WatchKey): string {
  const base = k.group === '' ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
  return `${base}${k.namespace ? `/namespaces/${encodeURIComponent(k.namespace)}` : ''}/${k.resource}`;
}

/** How a list or watch the identity may not do is reported: who, which verb, what, where. */
export function forbiddenMessage(k: WatchKey, identity: string, verb: string, detail: string): string {
  const where = k.namespace ? ` in namespace "${k.namespace}"` : ' at cluster scope';
  const what = k.group ? `${k.resource}.${k.group}` : k.resource;
  return `${identity} may not ${verb} ${what}${where}${detail ? `: ${detail}` : ''}`;
}
