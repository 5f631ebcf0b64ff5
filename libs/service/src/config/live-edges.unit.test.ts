// The edges of applied settings: what is refused, deferred to the next start, or reported as a
// problem of an --argocd-config-dir file, each naming the key or file.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfigReport } from './settings.js';
import { booleanSetting, commonSettings } from './common.js';
import { LiveSettings } from './live-settings.js';
import { readArgoConfigDir } from './argocd-files.js';

const settings = {
  ...commonSettings,
  'application.sync.impersonation.enabled': {
    schema: booleanSetting,
    default: false,
    description: 'impersonation',
  },
  // Narrower than the sync service's own, so that a value Argo's key accepts can be refused here.
  'reconcile.resync-ms': {
    schema: z.coerce.number().int().min(1000).max(600_000),
    default: 180_000,
    description: 'resync',
  },
  'sync.parallelism': { schema: z.coerce.number().int().min(1), default: 4, description: 'parallel syncs' },
};

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'capstan-argo-edges-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}

describe('applied settings at their edges', () => {
  it('refuses an applied value its setting does not accept, and keeps the value in force', () => {
    const { config, report } = loadConfigReport(settings, { argv: [], env: {} });
    const live = new LiveSettings(settings, config, report, 'sync');
    const change = live.apply({ 'argocd-cm': { version: 1, data: { 'timeout.reconciliation': '3600s' } } });
    expect(change.refused.map((r) => r.setting)).toEqual(['reconcile.resync-ms']);
    expect(live.get('reconcile.resync-ms')).toBe(180_000);
  });

  it('defers a key read only at start once the service runs, and says so', () => {
    const { config, report } = loadConfigReport(settings, { argv: [], env: {} });
    const live = new LiveSettings(settings, config, report, 'sync');
    live.apply({});
    const change = live.apply({
      'argocd-cmd-params-cm': { version: 1, data: { 'controller.operation.processors': '9' } },
    });
    expect(change.atNextStart).toEqual(['sync.parallelism']);
    expect(live.get('sync.parallelism')).toBe(4);
  });

  it('names an unreadable --argocd-config-dir, and a file that is not YAML', () => {
    const missing = readArgoConfigDir(join(tmpdir(), 'capstan-no-such-dir-for-argo'), 'sync', false);
    expect(missing.problems).toEqual([
      {
        field: 'argocd.config-dir',
        description: expect.stringMatching(/^cannot read directory .*: ENOENT$/) as unknown as string,
      },
    ]);
    const d = dir({ 'argocd-cm.yaml': 'data: [unclosed\n' });
    const broken = readArgoConfigDir(d, 'sync', false);
    expect(broken.problems).toHaveLength(1);
    expect(broken.problems[0]!.field).toBe(join(d, 'argocd-cm.yaml'));
    expect(broken.problems[0]!.description).toMatch(/^invalid YAML: /);
  });

  it("names a ConfigMap of the directory that is not one of Argo CD's settings objects", () => {
    const d = dir({
      'other.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-image-updater-config\ndata: {}\n',
    });
    const read = readArgoConfigDir(d, 'sync', false);
    expect(read.problems).toEqual([
      {
        field: join(d, 'other.yaml'),
        description:
          'ConfigMap "argocd-image-updater-config": expected ConfigMap argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm or argocd-notifications-cm, or Secret argocd-secret or argocd-notifications-secret',
      },
    ]);
  });

  it('reads booleans in the spellings Argo CD and the environment use', () => {
    expect(['true', '1', 'false', '0', true].map((v) => booleanSetting.parse(v))).toEqual([
      true,
      true,
      false,
      false,
      true,
    ]);
    expect(booleanSetting.safeParse('yes').success).toBe(false);
  });
});
