import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfigReport } from './settings.js';
import { booleanSetting, commonSettings } from './common.js';
import { LiveSettings } from './live-settings.js';
import { ValidationError } from '../errors/errors.js';

const settings = {
  ...commonSettings,
  'application.sync.impersonation.enabled': {
    schema: booleanSetting,
    default: false,
    flags: ['enable-impersonation'],
    description: 'impersonation',
  },
  'reconcile.resync-ms': {
    schema: z.coerce.number().int().min(1000),
    default: 180_000,
    description: 'resync',
  },
  'sync.parallelism': { schema: z.coerce.number().int().min(1), default: 4, description: 'parallel syncs' },
};

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'capstan-argo-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}

const argocdCm = (data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n${data}`;

describe('configuration files: flat keys, unknown keys, Argo CD ConfigMaps at start', () => {
  it("reads Argo's flat dotted key in the configuration file, as the nested form", () => {
    const d = dir({
      'config.yaml': 'application.sync.impersonation.enabled: "true"\nsync:\n  parallelism: 2\n',
    });
    const { config, report } = loadConfigReport(settings, {
      argv: ['--config', join(d, 'config.yaml')],
      env: {},
    });
    expect(config['application.sync.impersonation.enabled']).toBe(true);
    expect(config['sync.parallelism']).toBe(2);
    expect(report.sources['application.sync.impersonation.enabled']).toMatchObject({ kind: 'file' });
    expect(report.warnings).toEqual([]);
  });

  it('names an unknown key of the file with the nearest known one, and refuses it in strict mode', () => {
    const d = dir({ 'config.yaml': 'application.sync.impersonaton.enabled: "true"\n' });
    const file = join(d, 'config.yaml');
    const { config, report } = loadConfigReport(settings, { argv: ['--config', file], env: {} });
    expect(config['application.sync.impersonation.enabled']).toBe(false);
    expect(report.warnings).toEqual([
      `unknown setting "application.sync.impersonaton.enabled" in ${file} (did you mean "application.sync.impersonation.enabled"?): ignored`,
    ]);
    expect(() =>
      loadConfigReport(settings, { argv: ['--config', file, '--settings-strict'], env: {} }),
    ).toThrow(/settings\.strict refuses it/);
  });

  it('takes the keys of this service from --argocd-config-dir, below the environment', () => {
    const d = dir({
      'argocd-cm.yaml': argocdCm(
        '  application.sync.impersonation.enabled: "true"\n  timeout.reconciliation: 90s\n  exec.enabled: "true"\n',
      ),
    });
    const { config, report } = loadConfigReport(settings, {
      argv: ['--argocd-config-dir', d],
      env: { CAPSTAN_RECONCILE_RESYNC_MS: '5000' },
      service: 'sync',
    });
    expect(config['application.sync.impersonation.enabled']).toBe(true);
    expect(report.sources['application.sync.impersonation.enabled']).toMatchObject({ kind: 'argocd-file' });
    expect(config['reconcile.resync-ms']).toBe(5000);
    expect(report.warnings).toEqual([
      expect.stringContaining('argocd-cm: exec.enabled: recognised but not implemented by Capstan'),
    ]);
  });

  it('refuses a wrong value in a ConfigMap naming the key', () => {
    const d = dir({ 'cm.yaml': argocdCm('  application.sync.impersonation.enabled: "yes"\n') });
    let err: unknown;
    try {
      loadConfigReport(settings, { argv: ['--argocd-config-dir', d], env: {}, service: 'sync' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).violations[0]!.field).toContain(
      'argocd-cm: application.sync.impersonation.enabled',
    );
  });
});

describe('LiveSettings: applied ConfigMaps without restart', () => {
  it('applies, reverts when the key goes, keeps flags pinned, defers start-only keys', () => {
    const { config, report } = loadConfigReport(settings, { argv: ['--sync-parallelism', '3'], env: {} });
    const live = new LiveSettings(settings, config, report, 'sync');
    const changes: string[][] = [];
    live.onChange((c) => changes.push(c.changed));
    live.apply({ 'argocd-cm': { version: 1, data: { 'application.sync.impersonation.enabled': 'true' } } });
    expect(live.get('application.sync.impersonation.enabled')).toBe(true);
    expect(live.sourceOf('application.sync.impersonation.enabled')).toEqual({
      kind: 'applied',
      detail: 'argocd-cm: application.sync.impersonation.enabled (applied v1)',
    });
    const second = live.apply({
      'argocd-cm': { version: 2, data: {} },
      'argocd-cmd-params-cm': {
        version: 1,
        data: { 'controller.operation.processors': '9', 'controller.self.heal.timeout.seconds': '2' },
      },
    });
    expect(live.get('application.sync.impersonation.enabled')).toBe(false);
    expect(second.shadowed).toEqual([
      'sync.parallelism (argocd-cmd-params-cm: controller.operation.processors) is overridden by flag --sync-parallelism',
    ]);
    expect(live.get('sync.parallelism')).toBe(3);
    expect(changes).toEqual([
      ['application.sync.impersonation.enabled'],
      ['application.sync.impersonation.enabled'],
    ]);
  });
});
