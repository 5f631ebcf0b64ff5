// Argo CD's `applicationsets` lines only ever add denials to the per-Application checks.
import { describe, expect, it } from 'vitest';
import { BUILTIN_POLICY_CSV, parsePolicyCsv, projectRoleLines, RbacEnforcer } from '@capstan/rbac';
import { applicationSetLinesRefusal, setRbacObject } from './appset-policy.js';

const alice = { name: 'alice', groups: ['tenant-a'], kind: 'user' as const };
const set = { namespace: 'argocd', name: 'addons' };

async function enforcer(csv: string) {
  return RbacEnforcer.create([
    ...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'),
    ...parsePolicyCsv(csv, 'policy.csv'),
  ]);
}

describe('applicationsets policy lines', () => {
  it('add nothing when the operator wrote none (the built-in roles do not count)', async () => {
    const e = await enforcer('p, tenant-a, applications, *, team-a/*, allow\n');
    expect(applicationSetLinesRefusal(e, alice, 'create', 'team-a', set)).toBeUndefined();
  });

  it('refuse on an explicit deny', async () => {
    const e = await enforcer(
      'p, tenant-a, applications, *, team-a/*, allow\np, tenant-a, applicationsets, create, team-a/*, deny\n',
    );
    const r = applicationSetLinesRefusal(e, alice, 'create', 'team-a', set);
    expect(r).toMatchObject({ allowed: false, object: 'team-a/addons' });
    expect(r!.line!.text).toBe('p, tenant-a, applicationsets, create, team-a/*, deny');
    expect(applicationSetLinesRefusal(e, alice, 'delete', 'team-a', set)).toBeUndefined();
  });

  it('refuse callers an operator policy that grants applicationsets does not grant', async () => {
    const e = await enforcer(
      'p, role:platform, applicationsets, *, */*, allow\np, tenant-a, applications, *, team-a/*, allow\n',
    );
    expect(applicationSetLinesRefusal(e, alice, 'create', 'team-a', set)?.reason).toBe(
      'no policy line allows',
    );
    const platform = { name: 'pat', groups: ['role:platform'], kind: 'user' as const };
    expect(applicationSetLinesRefusal(e, platform, 'create', 'team-a', set)).toBeUndefined();
  });

  it("make a project's own grant exclusive in that project only", async () => {
    const e = await RbacEnforcer.create([
      ...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'),
      ...parsePolicyCsv('p, tenant-a, applications, *, */*, allow\n', 'policy.csv'),
      ...projectRoleLines('team-b', [
        {
          name: 'sets',
          policies: ['p, proj:team-b:sets, applicationsets, *, team-b/*, allow'],
          groups: ['b'],
        },
      ]).lines,
    ]);
    expect(applicationSetLinesRefusal(e, alice, 'create', 'team-a', set)).toBeUndefined();
    expect(applicationSetLinesRefusal(e, alice, 'create', 'team-b', set)).toMatchObject({ allowed: false });
  });

  it("name the set as Argo CD's RBACName does", () => {
    expect(setRbacObject('team-a', set)).toBe('team-a/addons');
    expect(setRbacObject('team-a', { namespace: 'tenants', name: 'addons' })).toBe('team-a/tenants/addons');
  });
});
