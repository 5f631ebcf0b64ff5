import { describe, expect, it } from 'vitest';
import { checkSettingsObject } from './check-object.js';

describe('checkSettingsObject: the check of apply and of `capstan admin settings validate`', () => {
  it('refuses a policy.csv with an unknown resource or a truncated line, naming the line', () => {
    const r = checkSettingsObject(
      'argocd-rbac-cm',
      {
        'policy.csv': 'p, role:x, applicationz, get, */*, allow\ng, alice\n',
        'policy.team.csv': 'p, role:y, applications, get, */*, permit\n',
        'policy.default': 'role:readonly',
      },
      { strict: false },
    );
    expect(r.problems.map((p) => p.field)).toEqual([
      'argocd-rbac-cm: policy.csv:1',
      'argocd-rbac-cm: policy.csv:2',
      'argocd-rbac-cm: policy.team.csv:1',
    ]);
    expect(r.problems[0]!.description).toContain('unknown resource "applicationz"');
    expect(r.warnings).toEqual([]);
  });

  it('accepts a good policy, and says when a start-only key takes effect', () => {
    expect(
      checkSettingsObject(
        'argocd-rbac-cm',
        { 'policy.csv': 'p, role:x, applications, get, */*, allow\ng, alice, role:x\n' },
        { strict: true },
      ),
    ).toEqual({ warnings: [], problems: [] });
    const params = checkSettingsObject(
      'argocd-cmd-params-cm',
      { 'controller.operation.processors': '8', 'server.log.level': 'debug' },
      { strict: true },
    );
    expect(params).toEqual({
      warnings: [
        'argocd-cmd-params-cm: controller.operation.processors: read at start by the sync service: takes effect at its next start (as in Argo CD)',
      ],
      problems: [],
    });
  });

  it('keeps the key checks: a wrong value and, in strict mode, an unknown key are problems', () => {
    const r = checkSettingsObject(
      'argocd-cm',
      { 'timeout.reconciliation': 'soon', 'timeout.reconcilation': '3m' },
      { strict: true },
    );
    expect(r.problems.map((p) => p.field)).toEqual([
      'argocd-cm: timeout.reconcilation',
      'argocd-cm: timeout.reconciliation',
    ]);
  });
});
