import { describe, expect, it } from 'vitest';
import { argoObjectOf } from './argo-objects.js';
import {
  isSensitiveArgoKey,
  argoKeySpec,
  argoOverlay,
  checkArgoSettings,
  nearestArgoKey,
  readArgoValue,
} from './argo-settings.js';

describe('Argo CD settings keys', () => {
  it('maps the flat impersonation key of argocd-cm to the sync service, read as Argo reads booleans', () => {
    const r = checkArgoSettings(
      'argocd-cm',
      { 'application.sync.impersonation.enabled': 'true' },
      { strict: true },
    );
    expect(r.problems).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.mapped).toMatchObject([
      {
        key: 'application.sync.impersonation.enabled',
        value: true,
        spec: { capstan: { service: 'sync', setting: 'application.sync.impersonation.enabled', live: true } },
      },
    ]);
    expect(readArgoValue('bool', 'False')).toEqual({ value: false });
    expect(readArgoValue('bool', 'yes')).toMatchObject({ problem: expect.stringContaining('"yes"') });
  });

  it('warns about a misspelled key naming the nearest known key, and refuses it in strict mode', () => {
    const data = { 'application.sync.impersonaton.enabled': 'true' };
    const lax = checkArgoSettings('argocd-cm', data, { strict: false });
    expect(lax.mapped).toEqual([]);
    expect(lax.problems).toEqual([]);
    expect(lax.warnings).toEqual([
      {
        key: 'argocd-cm: application.sync.impersonaton.enabled',
        message:
          'unknown key "application.sync.impersonaton.enabled" in argocd-cm (did you mean "application.sync.impersonation.enabled"?): ignored',
      },
    ]);
    const strict = checkArgoSettings('argocd-cm', data, { strict: true });
    expect(strict.warnings).toEqual([]);
    expect(strict.problems).toEqual(lax.warnings);
    expect(nearestArgoKey('argocd-cm', 'completely.different.thing')).toBeUndefined();
  });

  it('says when a key is recognised but not implemented, never silently', () => {
    const r = checkArgoSettings(
      'argocd-cm',
      { 'dex.config': 'connectors:\n- type: github\n  config: { clientSecret: s3cret }\n' },
      { strict: false },
    );
    expect(r.mapped).toEqual([]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]!.message).toContain('recognised but not implemented');
    expect(r.warnings[0]!.message).toContain('docs/sso.md');
    expect(JSON.stringify(r)).not.toContain('s3cret');
    expect(checkArgoSettings('argocd-cm', { 'dex.config': 'x' }, { strict: true }).problems).toHaveLength(1);
  });

  it('refuses a value of the wrong type naming the key', () => {
    const r = checkArgoSettings(
      'argocd-cm',
      { 'timeout.reconciliation': '3 minutes', 'application.sync.impersonation.enabled': true },
      { strict: false },
    );
    expect(r.problems).toEqual([
      expect.objectContaining({
        key: 'argocd-cm: application.sync.impersonation.enabled',
        message: expect.stringContaining('must be a string'),
      }),
      expect.objectContaining({
        key: 'argocd-cm: timeout.reconciliation',
        message: expect.stringContaining('"3 minutes"'),
      }),
    ]);
    expect(
      checkArgoSettings('argocd-rbac-cm', { 'policy.matchMode': 'regex' }, { strict: false }).problems[0]!
        .message,
    ).toContain('globs only');
  });

  it("reads Argo's account capabilities, and refuses one it does not have", () => {
    expect(readArgoValue('capabilities', 'apiKey, login')).toEqual({ value: ['apiKey', 'login'] });
    expect(
      checkArgoSettings('argocd-cm', { 'accounts.alice': 'login, sudo' }, { strict: false }).problems,
    ).toEqual([
      {
        key: 'argocd-cm: accounts.alice',
        message: 'unknown capability "sudo" (expected apiKey and/or login)',
      },
    ]);
    expect(argoKeySpec('argocd-cm', 'admin.enabled')?.capstan).toMatchObject({ service: 'api', live: true });
  });

  it('checks the shape of a system-level ignoreDifferences entry', () => {
    const key = 'resource.customizations.ignoreDifferences.apps_Deployment';
    expect(
      checkArgoSettings('argocd-cm', { [key]: 'jsonPointers: [/spec/replicas]' }, { strict: true }).problems,
    ).toEqual([]);
    expect(
      checkArgoSettings('argocd-cm', { [key]: 'jsonPointers: /spec/replicas' }, { strict: true }).problems,
    ).toEqual([{ key: `argocd-cm: ${key}`, message: 'jsonPointers: must be a list of strings' }]);
  });

  it('reads Argo durations and seconds as milliseconds', () => {
    expect(readArgoValue('duration', '180s')).toEqual({ value: 180_000 });
    expect(readArgoValue('duration', '1m30s')).toEqual({ value: 90_000 });
    // Argo CD's 0 turns the periodic refresh off; a fraction of a second is refused.
    expect(readArgoValue('duration', '0')).toEqual({ value: 0 });
    expect(readArgoValue('duration', '0s')).toEqual({ value: 0 });
    expect(readArgoValue('duration', '500ms')).toMatchObject({
      problem: expect.stringContaining('0 (off) or at least 1s'),
    });
    expect(readArgoValue('seconds', '5')).toEqual({ value: 5000 });
  });

  it('prefers the most specific entry: an implemented cmd-params key over its component wildcard', () => {
    expect(argoKeySpec('argocd-cmd-params-cm', 'controller.operation.processors')?.capstan?.setting).toBe(
      'sync.parallelism',
    );
    expect(argoKeySpec('argocd-cmd-params-cm', 'controller.status.processors')?.capstan).toBeUndefined();
    expect(argoKeySpec('argocd-cm', 'accounts.alice.enabled')?.key).toBe('accounts.<name>.enabled');
    expect(
      argoKeySpec('argocd-cm', 'resource.customizations.health.cert-manager.io_Certificate')?.capstan
        ?.setting,
    ).toBe('resource.customizations');
  });

  it('names the known key for a misspelling under a wildcard, not "recognised but not implemented"', () => {
    const params = checkArgoSettings(
      'argocd-cmd-params-cm',
      {
        'controller.operaton.processors': '4',
        'reposerver.log.levl': 'debug',
        'controller.self.heal.timeout.second': '5',
        // A real Argo parameter Capstan does not implement stays recognised.
        'controller.status.processors': '20',
      },
      { strict: false },
    );
    const byKey = Object.fromEntries(params.warnings.map((w) => [w.key.split(': ')[1], w.message]));
    expect(byKey['controller.operaton.processors']).toBe(
      'unknown key "controller.operaton.processors" in argocd-cmd-params-cm (did you mean "controller.operation.processors"?): ignored',
    );
    expect(byKey['reposerver.log.levl']).toContain('(did you mean "reposerver.log.level"?)');
    expect(byKey['controller.self.heal.timeout.second']).toContain(
      '(did you mean "controller.self.heal.timeout.seconds"?)',
    );
    expect(byKey['controller.status.processors']).toContain('recognised but not implemented');
    expect(params.mapped).toEqual([]);
    const strict = checkArgoSettings(
      'argocd-cmd-params-cm',
      { 'reposerver.log.levl': 'debug' },
      { strict: true },
    );
    expect(strict.problems[0]?.message).toContain('did you mean "reposerver.log.level"');
  });

  it("suggests placeholder keys read with the key's own segments", () => {
    expect(nearestArgoKey('argocd-cm', 'accounts.alice.enabeld')).toBe('accounts.alice.enabled');
    expect(nearestArgoKey('argocd-cm', 'resource.customizations.heath.apps_Deployment')).toBe(
      'resource.customizations.health.apps_Deployment',
    );
    expect(nearestArgoKey('argocd-rbac-cm', 'policy.overlay.cvs')).toBe('policy.overlay.csv');
    const r = checkArgoSettings(
      'argocd-cm',
      { 'accounts.alice.enabeld': 'false', 'resource.customizations.heath.x': 'hs = {}' },
      { strict: false },
    );
    expect(r.warnings.map((w) => w.message)).toEqual([
      'unknown key "accounts.alice.enabeld" in argocd-cm (did you mean "accounts.alice.enabled"?): ignored',
      'unknown key "resource.customizations.heath.x" in argocd-cm (did you mean "resource.customizations.health.x"?): ignored',
    ]);
  });

  it('builds each service its overlay: policy.csv joined with its overlays, customizations as one map', () => {
    const objects = {
      'argocd-rbac-cm': {
        'policy.csv': 'g, alice, role:admin',
        'policy.overlay.csv': 'g, bob, role:readonly',
        'policy.default': 'role:readonly',
      },
      'argocd-cm': {
        'timeout.reconciliation': '60s',
        'resource.customizations.health.example.com_Widget': 'hs = {}\nreturn hs',
        'resource.customizations.ignoreDifferences.apps_Deployment': 'jsonPointers:\n- /spec/replicas\n',
      },
    };
    const api = argoOverlay(objects, 'api');
    expect(api.get('rbac.policy-csv')).toMatchObject({
      value: 'g, alice, role:admin\ng, bob, role:readonly',
    });
    expect(api.get('rbac.default-role')).toMatchObject({
      value: 'role:readonly',
      from: ['argocd-rbac-cm: policy.default'],
    });
    expect(api.has('reconcile.resync-ms')).toBe(false);
    const sync = argoOverlay(objects, 'sync');
    expect(sync.get('reconcile.resync-ms')).toMatchObject({ value: 60_000, live: true });
    expect(Object.keys(sync.get('resource.customizations')!.value as object)).toEqual([
      'resource.customizations.health.example.com_Widget',
      'resource.customizations.ignoreDifferences.apps_Deployment',
    ]);
  });

  it('gives the repo service kustomize.buildOptions and the named kustomize versions as one map, live (as Argo CD reads them per render)', () => {
    const repo = argoOverlay(
      {
        'argocd-cm': {
          'kustomize.buildOptions': '--enable-helm',
          'kustomize.path.v5.4.3': '/tools/kustomize-5.4.3',
          'kustomize.buildOptions.v5.4.3': '--load-restrictor LoadRestrictionsNone',
        },
      },
      'repo',
    );
    expect(repo.get('kustomize.build-options')).toMatchObject({ value: '--enable-helm', live: true });
    expect(repo.get('kustomize.versions')).toMatchObject({ live: true });
    expect(repo.get('kustomize.versions')?.value).toEqual({
      'kustomize.path.v5.4.3': '/tools/kustomize-5.4.3',
      'kustomize.buildOptions.v5.4.3': '--load-restrictor LoadRestrictionsNone',
    });
  });
});

describe('Argo CD Notifications objects', () => {
  it('checks argocd-notifications-cm key by key with the notifier reading, and sets no service setting', () => {
    const data = {
      'trigger.on-sync-succeeded':
        "- when: app.status.operationState.phase in ['Succeeded']\n  send: [app-sync-succeeded]",
      'template.app-sync-succeeded': 'message: Application {{.app.metadata.name}} synced',
      'service.webhook.hook': 'url: ftp://example.com/',
      'trigger.bad': '- when: len(app.status) > 1\n  send: [x]',
    };
    const r = checkArgoSettings('argocd-notifications-cm', data, { strict: true });
    expect(r.problems.map((p) => p.key)).toEqual([
      'argocd-notifications-cm: service.webhook.hook',
      'argocd-notifications-cm: trigger.bad',
    ]);
    expect(r.problems[0]!.message).toBe('url: must be an http(s) URL');
    expect(r.problems[1]!.message).toMatch(/^\[0\]\.when: /);
    expect(r.mapped.map((m) => m.key)).toEqual(['template.app-sync-succeeded', 'trigger.on-sync-succeeded']);
    expect(argoOverlay({ 'argocd-notifications-cm': data }, 'api').size).toBe(0);
  });

  it('reads the notifications objects as documents: a Secret decoded, a ConfigMap of that name refused', () => {
    expect(
      argoObjectOf({
        kind: 'Secret',
        metadata: { name: 'argocd-notifications-secret' },
        data: { token: Buffer.from('t0k').toString('base64') },
        stringData: { other: 'x' },
      }),
    ).toEqual({ object: 'argocd-notifications-secret', data: { token: 't0k', other: 'x' } });
    expect(
      argoObjectOf({ kind: 'ConfigMap', metadata: { name: 'argocd-notifications-cm' }, data: { a: 'b' } }),
    ).toEqual({ object: 'argocd-notifications-cm', data: { a: 'b' } });
    expect(
      argoObjectOf({ kind: 'ConfigMap', metadata: { name: 'argocd-notifications-secret' } }),
    ).toMatchObject({
      problem: expect.stringContaining('Secret argocd-secret or argocd-notifications-secret'),
    });
    expect(argoObjectOf({ kind: 'Deployment' })).toBeUndefined();
    expect(isSensitiveArgoKey('argocd-notifications-secret', 'anything')).toBe(true);
    expect(isSensitiveArgoKey('argocd-notifications-cm', 'service.slack')).toBe(false);
  });

  it('keeps every argocd-notifications-secret key sensitive, and warns about the cm keys it does not implement', () => {
    expect(argoKeySpec('argocd-notifications-secret', 'slack-token')).toMatchObject({ sensitive: true });
    const r = checkArgoSettings('argocd-notifications-cm', { 'service.teams': 'x: y' }, { strict: false });
    expect(r.warnings[0]!.message).toContain('recognised but not implemented');
  });
});
