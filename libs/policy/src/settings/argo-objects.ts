// Argo CD's configuration objects as documents: a ConfigMap's data, or the Secret argocd-secret's
// data (base64) and stringData. The one decoding for files given at start, the api's apply and the CLI.
import { isArgoConfigObject } from './argo-settings.js';
import { ARGO_SECRET_OBJECTS, type ArgoConfigObject } from './argo-keys.js';

export interface ArgoObjectDoc {
  object: ArgoConfigObject;
  data: Record<string, unknown>;
}

/** A ConfigMap's data, or a Secret's data (base64) and stringData; undefined for other objects. */
/** undefined for a document that is neither a ConfigMap nor a Secret. */
export function argoObjectOf(doc: unknown): ArgoObjectDoc | { problem: string } | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const o = doc as { kind?: unknown; metadata?: { name?: unknown }; data?: unknown; stringData?: unknown };
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '';
  if (o.kind !== 'ConfigMap' && o.kind !== 'Secret') return undefined;
  const secret = (ARGO_SECRET_OBJECTS as readonly string[]).includes(name);
  const expected = o.kind === 'Secret' ? secret : !secret;
  if (!isArgoConfigObject(name) || !expected)
    return {
      problem: `${String(o.kind)} ${JSON.stringify(name)}: expected ConfigMap argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm or argocd-notifications-cm, or Secret argocd-secret or argocd-notifications-secret`,
    };
  const map = (v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  if (o.kind === 'ConfigMap') return { object: name, data: { ...map(o.data) } };
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(map(o.data)))
    data[k] = typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
  return { object: name, data: { ...data, ...map(o.stringData) } };
}
