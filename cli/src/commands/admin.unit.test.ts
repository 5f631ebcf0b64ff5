import { describe, expect, it } from 'vitest';
import { validateSettingsText } from './admin-settings.js';

const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n${data}`;

describe('capstan admin settings validate', () => {
  it('accepts the flat impersonation key', () => {
    expect(
      validateSettingsText(cm('  application.sync.impersonation.enabled: "true"\n'), 'cm.yaml', true),
    ).toEqual({
      warnings: [],
      errors: [],
      objects: ['argocd-cm'],
    });
  });

  it('warns about a misspelled key with the nearest one, and refuses it with --strict', () => {
    const text = cm('  application.sync.impersonaton.enabled: "true"\n');
    const lax = validateSettingsText(text, 'cm.yaml', false);
    expect(lax.errors).toEqual([]);
    expect(lax.warnings).toEqual([
      'cm.yaml: argocd-cm: application.sync.impersonaton.enabled: unknown key "application.sync.impersonaton.enabled" in argocd-cm (did you mean "application.sync.impersonation.enabled"?): ignored',
    ]);
    expect(validateSettingsText(text, 'cm.yaml', true).errors).toEqual(lax.warnings);
  });

  it('names the key of a wrong value, and a ConfigMap that is not one of Argo CD settings', () => {
    const r = validateSettingsText(
      `${cm('  timeout.reconciliation: soon\n')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: other }\n`,
      'cm.yaml',
      false,
    );
    expect(r.errors).toEqual([
      expect.stringContaining('cm.yaml: argocd-cm: timeout.reconciliation: expected a duration'),
      expect.stringContaining('cm.yaml: document 2: ConfigMap "other": expected ConfigMap argocd-cm'),
    ]);
  });

  it('refuses what the api refuses at apply: a policy.csv with an unknown resource or a truncated line', () => {
    const r = validateSettingsText(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm}\ndata:\n  policy.csv: |\n    p, role:x, applicationz, get, */*, allow\n    g, alice\n  policy.default: role:readonly\n',
      'rbac.yaml',
      false,
    );
    expect(r.errors).toEqual([
      expect.stringContaining('rbac.yaml: argocd-rbac-cm: policy.csv:1: unknown resource "applicationz"'),
      'rbac.yaml: argocd-rbac-cm: policy.csv:2: expected "g, subject, role", got 2 fields',
    ]);
    expect(r.warnings).toEqual([]);
  });
});
