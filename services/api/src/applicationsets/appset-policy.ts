// Argo CD's `applicationsets` RBAC resource. ApplicationSets have no project and no RBAC resource of
// their own in Capstan (proposal 003): what a caller may do with a set follows from what they may do
// with its Applications. An operator's Argo CD policy may still mention `applicationsets`; it is
// honoured as an additional check only, so a policy.csv keeps meaning what it meant and never opens
// anything the per-Application checks refuse:
//  - an explicit deny line on `applicationsets` refuses;
//  - when the operator's policy (policy.csv, inline policy; the built-in roles do not count) grants
//    `applicationsets` at all, the caller must be among those it grants; a project role's grant does
//    the same for its own project only.
// The object is Argo CD's RBACName: `<project>/<name>`, or `<project>/<namespace>/<name>` outside the
// control namespace; the project is each generated Application's.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { Decision, RbacEnforcer } from '@capstan/rbac';
import type { Principal } from '../auth/principal.js';
import type { SetRef } from './ownership.js';

export const APPLICATIONSETS = 'applicationsets';

const PROJECT_SOURCE = 'project:';
const grantsBySource = new WeakMap<RbacEnforcer, { global: boolean; projects: Set<string> }>();

/**
 * Whether an allow line outside the built-in roles grants `applicationsets` for objects of
 * `project`: the operator's policy (policy.csv, inline) for every project, a project's own roles for
 * that project only (one tenant's roles never change what another tenant may do).
 */
function grantsSets(enforcer: RbacEnforcer, project: string): boolean {
  let known = grantsBySource.get(enforcer);
  if (!known) {
    known = { global: false, projects: new Set() };
    for (const l of enforcer.lines) {
      if (
        l.kind !== 'p' ||
        l.source === 'builtin' ||
        l.fields[1] !== APPLICATIONSETS ||
        l.fields[4] === 'deny'
      )
        continue;
      if (l.source.startsWith(PROJECT_SOURCE)) known.projects.add(l.source.slice(PROJECT_SOURCE.length));
      else known.global = true;
    }
    grantsBySource.set(enforcer, known);
  }
  return known.global || known.projects.has(project);
}

export function setRbacObject(project: string, set: SetRef): string {
  return set.namespace && set.namespace !== DEFAULT_CONTROL_NAMESPACE
    ? `${project}/${set.namespace}/${set.name}`
    : `${project}/${set.name}`;
}

/** The refusal Argo's `applicationsets` lines add for this action, or undefined when they add none. */
export function applicationSetLinesRefusal(
  enforcer: RbacEnforcer,
  p: Principal,
  action: string,
  project: string,
  set: SetRef,
): (Decision & { object: string }) | undefined {
  const object = setRbacObject(project, set);
  const d = enforcer.enforce({ name: p.name, groups: p.groups }, APPLICATIONSETS, action, object);
  if (d.allowed) return undefined;
  if (d.line || grantsSets(enforcer, project)) return { ...d, object };
  return undefined;
}
