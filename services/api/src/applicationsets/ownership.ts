// Which ApplicationSet owns an Application, as Kubernetes and Argo CD record it: a controller owner
// reference in metadata.ownerReferences. The api stamps it on every Application a set writes (the
// set lives in the Application's namespace, as in Argo CD); users cannot write it (a directly
// created Application keeps only name, namespace, labels and annotations), so ownership is never forged.
import { ARGO_API_VERSION, type Application } from '@capstan/policy';
import { dnsLabelProblem, dnsSubdomainProblem } from '@capstan/policy';
import { invalid } from '../support/validation.js';

export const APPLICATION_SET_KIND = 'ApplicationSet';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface SetRef {
  namespace: string;
  name: string;
}

/** `<namespace>/<name>` of a set, validated (a namespace is a DNS label, a name a DNS subdomain). */
export function parseSetRef(value: string, field = 'application_set'): SetRef {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0) throw invalid(field, 'must be <namespace>/<name>');
  const problem = dnsLabelProblem(namespace) ?? dnsSubdomainProblem(name);
  if (problem) throw invalid(field, problem);
  return { namespace, name };
}

/** The owner reference Argo CD's controller sets (controllerutil.SetControllerReference). */
export function setOwnerReference(set: SetRef): OwnerReference {
  return {
    apiVersion: ARGO_API_VERSION,
    kind: APPLICATION_SET_KIND,
    name: set.name,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function ownerReferencesOf(app: Application): OwnerReference[] {
  const refs = (app.metadata as { ownerReferences?: unknown }).ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerReference[]) : [];
}

/** The controller owner reference, if any. */
export function controllerOf(app: Application): OwnerReference | undefined {
  return ownerReferencesOf(app).find((r) => r.controller === true);
}

export function isOwnedBy(app: Application, set: SetRef): boolean {
  const c = controllerOf(app);
  return (
    c !== undefined &&
    c.kind === APPLICATION_SET_KIND &&
    c.name === set.name &&
    (app.metadata.namespace ?? '') === set.namespace
  );
}

/** The Application with the set's controller reference (and no other controller). */
export function withSetOwner(app: Application, set: SetRef): Application {
  const others = ownerReferencesOf(app).filter((r) => r.controller !== true);
  return { ...app, metadata: { ...app.metadata, ownerReferences: [...others, setOwnerReference(set)] } };
}

/**
 * Argo CD's refusal to take over an Application (controller-runtime's AlreadyOwnedError, which the
 * ApplicationSet controller returns). An Application with no controller at all is refused too (Argo
 * CD would adopt it); the message then names no owner.
 */
export function takeOverRefusal(app: Application, set: SetRef): string {
  const ns = app.metadata.namespace ?? set.namespace;
  const c = controllerOf(app);
  if (c)
    return `Object ${ns}/${app.metadata.name} is already owned by another ${c.kind} controller ${c.name}`;
  return `Object ${ns}/${app.metadata.name} already exists and is not owned by ApplicationSet ${set.name}`;
}

/**
 * Ownership survives a user's edit of the Application (kubectl apply keeps metadata the manifest
 * does not mention): the stored owner references are carried over.
 */
export function keepOwnership(app: Application, existing: Application | undefined): Application {
  const refs = existing ? ownerReferencesOf(existing) : [];
  if (refs.length === 0 || ownerReferencesOf(app).length > 0) return app;
  return { ...app, metadata: { ...app.metadata, ownerReferences: refs } };
}
