// The decisions about control-plane objects an Application delivers from git (pure, no I/O): for
// each object, may this Application write it, and what would writing it do? The api is the
// authority (the sync service made the same project checks before calling, but it only routes).
//  - The delivering Application's project chain must allow the kind (group argoproj.io, namespaced)
//    and its destination with the object's namespace (Argo CD's app-of-apps rules).
//  - AppProjects live in the control namespace; allowedParentProjects bounds them, their chain must
//    resolve and they must be valid (checkDeliveredProjects, the very check of the sync decision).
//  - An Application it delivers must be in the deliverer's own project, a project under it (by the
//    parentProject chain), or a project it delivers itself: delivering an Application never reaches
//    into another tenant's project. It then passes every check of a directly created Application.
//  - Ownership: an object that exists and was not delivered by this Application is never taken over.
import {
  checkDeliveredProjects,
  ProjectChain,
  type Application,
  type AppProject,
  type ProjectLookup,
} from '@capstan/policy';
import { sameManifest } from '../support/canonical.js';
import {
  appKey,
  ARGO_GROUP,
  deliveredBy,
  deliveredRefusal,
  sameApp,
  withTracking,
  type AppRef,
} from './tracking.js';
import { delivererRef } from './deliverer-rights.js';

export type DeliveredObject =
  | { kind: 'AppProject'; namespace: string; name: string; value: AppProject }
  | { kind: 'Application'; namespace: string; name: string; value: Application }
  | { kind: 'ApplicationSet'; namespace: string; name: string; value: DeliveredSet };

/** An ApplicationSet as Argo CD writes it (validated by the appset service when it is written). */
export interface DeliveredSet {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** skipped: decided but not written, because an object written before it was refused. */
export type DeliveryAction =
  'create' | 'update' | 'unchanged' | 'prune' | 'prune-skipped' | 'refused' | 'skipped';

export interface DeliveryVerdict {
  kind: string;
  namespace: string;
  name: string;
  /** The RBAC object of the audit row: a project's name, an Application's `<project>/<name>`. */
  object: string;
  action: DeliveryAction;
  allowed: boolean;
  reason: string;
}

export interface DeliveryInput {
  deliverer: { ref: AppRef; application: Application; server: string };
  controlNamespace: string;
  objects: readonly DeliveredObject[];
  /** Stored projects by name. */
  projects: ProjectLookup;
  /** Stored Applications by `<namespace>/<name>`. */
  applications: ReadonlyMap<string, Application>;
  /** What the project checks of ApplicationsService refuse, per delivered Application key. */
  applicationViolations: ReadonlyMap<string, string[]>;
  /** The recorded owner of each existing ApplicationSet, by `<namespace>/<name>`. */
  setOwners: ReadonlyMap<string, string>;
}

export const objectKey = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;

const rbacObject = (o: DeliveredObject): string => {
  switch (o.kind) {
    case 'AppProject':
      return o.name;
    case 'Application':
      return `${o.value.spec.project}/${o.name}`;
    case 'ApplicationSet':
      return objectKey(o);
  }
};

export function decideDelivery(input: DeliveryInput): DeliveryVerdict[] {
  const { deliverer, objects } = input;
  const deliveredProjects = objects.flatMap((o) => (o.kind === 'AppProject' ? [o.value] : []));
  const projectChecks = new Map(
    checkDeliveredProjects(deliverer.application, deliveredProjects, input.projects).map((c) => [
      c.project,
      c,
    ]),
  );
  const after: ProjectLookup = (name) =>
    deliveredProjects.find((p) => p.metadata.name === name) ?? input.projects(name);
  const own = ProjectChain.resolve(deliverer.application.spec.project, input.projects);

  return objects.map((o): DeliveryVerdict => {
    const base = { kind: o.kind, namespace: o.namespace, name: o.name, object: rbacObject(o) };
    const refuse = (reason: string): DeliveryVerdict => ({
      ...base,
      action: 'refused',
      allowed: false,
      reason,
    });
    if (!own.ok) return refuse(own.reason);
    const kind = own.chain.permitsResource({ group: ARGO_GROUP, kind: o.kind, name: o.name }, true);
    if (!kind.allowed) return refuse(kind.reason);
    const destination = deliverer.application.spec.destination;
    const where = own.chain.permitsDestination({
      server: deliverer.server,
      name: destination.name,
      namespace: o.namespace,
    });
    if (!where.allowed) return refuse(`${o.kind} ${JSON.stringify(o.name)}: ${where.reason}`);

    if (o.kind === 'ApplicationSet') return decideSet(o, input, base);
    const existing = o.kind === 'AppProject' ? input.projects(o.name) : input.applications.get(objectKey(o));
    if (existing) {
      const owner = deliveredBy(existing.metadata);
      if (!sameApp(owner, deliverer.ref))
        return refuse(
          owner
            ? deliveredRefusal(o.kind, o.name, owner)
            : `${o.kind} ${o.name} already exists and was not delivered by Application ${appKey(deliverer.ref)}: an Application never takes over an object it did not create`,
        );
    }

    const problem =
      o.kind === 'AppProject'
        ? projectProblem(o, input.controlNamespace, projectChecks)
        : applicationProblem(o, input, after);
    if (problem) return refuse(problem);

    const next = withTracking(o.value, o.kind, deliverer.ref);
    if (!existing) return { ...base, action: 'create', allowed: true, reason: `${o.kind} ${o.name} created` };
    if (sameManifest(existing, next))
      return { ...base, action: 'unchanged', allowed: true, reason: `${o.kind} ${o.name} unchanged` };
    return { ...base, action: 'update', allowed: true, reason: `${o.kind} ${o.name} updated` };
  });
}

/**
 * A delivered ApplicationSet: in the control namespace, never taking over a set someone else owns.
 * What it generates is decided when it is written, by the appset service as the delivering
 * Application (deliverer-rights.ts: every Application in a project it may deliver into, passing that
 * project's checks).
 */
function decideSet(
  o: DeliveredObject & { kind: 'ApplicationSet' },
  input: DeliveryInput,
  base: Pick<DeliveryVerdict, 'kind' | 'namespace' | 'name' | 'object'>,
): DeliveryVerdict {
  const refuse = (reason: string): DeliveryVerdict => ({
    ...base,
    action: 'refused',
    allowed: false,
    reason,
  });
  if (o.namespace !== input.controlNamespace)
    return refuse(
      `ApplicationSet ${JSON.stringify(o.name)}: delivered ApplicationSets live in the control namespace ${JSON.stringify(input.controlNamespace)}, not ${JSON.stringify(o.namespace)}`,
    );
  const owner = input.setOwners.get(objectKey(o));
  const me = `application:${appKey(input.deliverer.ref)}`;
  if (owner !== undefined && owner !== me)
    return refuse(
      delivererRef(owner)
        ? deliveredRefusal('ApplicationSet', o.name, delivererRef(owner)!)
        : `ApplicationSet ${o.name} already exists and was not delivered by Application ${appKey(input.deliverer.ref)}: an Application never takes over an object it did not create`,
    );
  return owner
    ? { ...base, action: 'update', allowed: true, reason: `ApplicationSet ${o.name} applied` }
    : { ...base, action: 'create', allowed: true, reason: `ApplicationSet ${o.name} created` };
}

function projectProblem(
  o: DeliveredObject & { kind: 'AppProject' },
  controlNamespace: string,
  checks: ReadonlyMap<string, { allowed: boolean; reason: string }>,
): string | undefined {
  if (o.namespace !== controlNamespace)
    return `AppProject ${JSON.stringify(o.name)}: AppProjects live in the control namespace ${JSON.stringify(controlNamespace)}, not ${JSON.stringify(o.namespace)}`;
  const check = checks.get(o.name);
  return check && !check.allowed ? check.reason : undefined;
}

function applicationProblem(
  o: DeliveredObject & { kind: 'Application' },
  input: DeliveryInput,
  after: ProjectLookup,
): string | undefined {
  const { deliverer } = input;
  const label = `Application ${objectKey(o)}`;
  if (o.namespace === deliverer.ref.namespace && o.name === deliverer.ref.name)
    return `${label}: an Application cannot deliver itself`;
  const project = o.value.spec.project;
  const delivererProject = deliverer.application.spec.project;
  const chain = ProjectChain.resolve(project, after);
  if (!chain.ok) return `${label}: ${chain.reason}`;
  const deliveredHere = input.objects.some((p) => p.kind === 'AppProject' && p.name === project);
  const stored = input.projects(project);
  const deliveredBefore = stored !== undefined && sameApp(deliveredBy(stored.metadata), deliverer.ref);
  if (!chain.chain.names.includes(delivererProject) && !deliveredHere && !deliveredBefore)
    return `${label}: project ${JSON.stringify(project)} is not ${JSON.stringify(delivererProject)} (the project of Application ${appKey(deliverer.ref)}), not under it by parentProject, and not delivered by it`;
  if (o.namespace !== input.controlNamespace) {
    const ns = chain.chain.permitsApplicationNamespace(o.namespace, input.controlNamespace);
    if (!ns.allowed) return `${label}: ${ns.reason}`;
  }
  const violations = input.applicationViolations.get(objectKey(o)) ?? [];
  return violations.length > 0 ? `${label}: ${violations.join('; ')}` : undefined;
}

/** Objects this Application delivered before and no longer delivers (prune), or all (cascade). */
export function decidePrune(
  stale: readonly {
    kind: 'AppProject' | 'Application' | 'ApplicationSet';
    namespace: string;
    name: string;
    object: string;
    annotations?: Record<string, string>;
  }[],
  option: 'Prune=false' | 'Delete=false',
): DeliveryVerdict[] {
  return stale.map((o) => {
    const base = { kind: o.kind, namespace: o.namespace, name: o.name, object: o.object };
    const options = (o.annotations?.['argocd.argoproj.io/sync-options'] ?? '')
      .split(',')
      .map((s) => s.trim());
    if (options.includes(option))
      return {
        ...base,
        action: 'prune-skipped',
        allowed: true,
        reason: `${o.kind} ${o.name} kept: sync option ${option}`,
      };
    return { ...base, action: 'prune', allowed: true, reason: `${o.kind} ${o.name} pruned` };
  });
}
