// Who may write a project where (issue 12, self-service through the API). RBAC on the project
// itself (`projects, create|update, <name>`) is the caller's check, as for every object; this adds
// what a parentProject changes, read the way Argo CD RBAC lines read (`p, <role>, projects, <action>, <name>`):
//   - naming a parent when creating a project needs `projects, get, <parent>`: a child gains
//     nothing its parent chain does not allow (the bound check), so seeing the parent is enough;
//   - changing a project's parentProject needs `projects, update` on the old parent (the project
//     leaves the bounds its owner set) and on the new one (it joins its tree);
//   - a project without a parent, or a change that removes it, is an admin action
//     (selfServiceRefusal in project.aggregate.ts).
// Every decision is an audit row in audit.access_decisions whose reason says what it was for.
import { PermissionDeniedError } from '@capstan/service';
import type { AppProject } from '@capstan/policy';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { selfServiceRefusal } from './project.aggregate.js';

interface ParentCheck {
  readonly action: 'get' | 'update';
  readonly parent: string;
  readonly purpose: string;
}

/** The rights on parent projects a write needs (none when the parent does not change). */
export function parentChecks(before: AppProject | undefined, after: AppProject): ParentCheck[] {
  const name = after.metadata.name;
  const from = before?.spec.parentProject;
  const to = after.spec.parentProject;
  if (before === undefined) {
    return to === undefined
      ? []
      : [{ action: 'get', parent: to, purpose: `create project ${name} under parentProject ${to}` }];
  }
  if (from === to) return [];
  const checks: ParentCheck[] = [];
  if (from !== undefined)
    checks.push({
      action: 'update',
      parent: from,
      purpose: `move project ${name} out of parentProject ${from}`,
    });
  if (to !== undefined)
    checks.push({ action: 'update', parent: to, purpose: `move project ${name} under parentProject ${to}` });
  return checks;
}

/**
 * Authorises what a write does to the parent chain, recording each decision with its purpose;
 * throws PermissionDeniedError naming the right that is missing.
 */
export async function authorizeParents(
  authz: Authorizer,
  ctx: RequestContext,
  before: AppProject | undefined,
  after: AppProject,
): Promise<void> {
  const name = after.metadata.name;
  const writeAction = before === undefined ? 'create' : 'update';
  const refusal = selfServiceRefusal(before, after, authz.isAdmin(ctx.principal));
  if (refusal !== null) {
    await authz.record(ctx.principal, 'projects', writeAction, name, ctx.via, {
      allowed: false,
      reason: refusal,
    });
    throw new PermissionDeniedError(refusal);
  }
  for (const check of parentChecks(before, after)) {
    const d = authz.decide(ctx.principal, 'projects', check.action, check.parent);
    const reason = `${d.reason} (needed to ${check.purpose})`;
    await authz.record(ctx.principal, 'projects', check.action, check.parent, ctx.via, { ...d, reason });
    if (!d.allowed)
      throw new PermissionDeniedError(
        `permission denied: projects, ${check.action}, ${check.parent} (${ctx.principal.name}) is needed to ${check.purpose}`,
      );
  }
}
