// Argo CD objects given as files at start: the keys a service reads from the objects themselves are
// carried in the report, a key of the service it would drop is named (refused in strict mode), and
// an applied log level changes the logger of a running service, its children included.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { loadConfigReport } from './settings.js';
import { commonSettings } from './common.js';
import { followLogLevel, LiveSettings } from './live-settings.js';
import { createLogger } from '../observability/logger.js';

const API_FILES = `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-cm }
data:
  admin.enabled: "false"
  users.anonymous.enabled: "true"
  accounts.alice: apiKey, login
  accounts.alice.enabled: "false"
  url: https://capstan.example
---
apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-rbac-cm }
data:
  policy.csv: "g, alice, role:admin"
  policy.default: role:readonly
  policy.matchMode: glob
  scopes: "[groups, email]"
`;

function dir(text: string): string {
  const d = mkdtempSync(join(tmpdir(), 'capstan-argo-files-'));
  writeFileSync(join(d, 'argocd.yaml'), text);
  return d;
}

const apiLike = {
  ...commonSettings,
  'rbac.policy-csv': { schema: z.string(), default: '', description: 'policy' },
  'rbac.default-role': { schema: z.string(), default: '', description: 'default role' },
};

describe('Argo CD objects given as files: nothing of them dropped in silence', () => {
  it('carries the objects for the keys read from them, with no warning, and sets its own settings', () => {
    const d = dir(API_FILES);
    const { config, report } = loadConfigReport(apiLike, {
      argv: ['--argocd-config-dir', d],
      env: {},
      service: 'api',
    });
    expect(report.warnings).toEqual([]);
    expect(config['rbac.default-role']).toBe('role:readonly');
    expect(report.argoFiles?.['argocd-cm']).toEqual({
      data: {
        'admin.enabled': 'false',
        'users.anonymous.enabled': 'true',
        'accounts.alice': 'apiKey, login',
        'accounts.alice.enabled': 'false',
        url: 'https://capstan.example',
      },
      files: [join(d, 'argocd.yaml')],
    });
    expect(report.argoFiles?.['argocd-rbac-cm']?.data.scopes).toBe('[groups, email]');
  });

  it('names a key of the service whose setting it does not have, and refuses it in strict mode', () => {
    const d = dir(API_FILES);
    const withoutPolicy = { ...commonSettings, 'rbac.default-role': apiLike['rbac.default-role'] };
    const { report } = loadConfigReport(withoutPolicy, {
      argv: ['--argocd-config-dir', d],
      env: {},
      service: 'api',
    });
    expect(report.warnings).toEqual([
      `argocd-rbac-cm: policy.csv (${d}): not read by the api service from files given at start: ignored (apply it with capstan apply -f)`,
    ]);
    expect(() =>
      loadConfigReport(withoutPolicy, {
        argv: ['--argocd-config-dir', d, '--settings-strict'],
        env: {},
        service: 'api',
      }),
    ).toThrow(/argocd-rbac-cm: policy\.csv.*not read by the api service/);
  });
});

describe('log levels applied live', () => {
  it('sets the level of the logger and of the children it made, unless pinned', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('repo', { level: 'info', destination: sink });
    const child = logger.child({ component: 'cache' });
    const grandchild = child.child({ repo: 'x' });
    const { config, report } = loadConfigReport(commonSettings, { argv: [], env: {} });
    const live = new LiveSettings(commonSettings, config, report, 'repo');
    followLogLevel(logger, live);
    live.apply({ 'argocd-cmd-params-cm': { version: 1, data: { 'reposerver.log.level': 'debug' } } });
    expect([logger.level, child.level, grandchild.level]).toEqual(['debug', 'debug', 'debug']);
    grandchild.debug('seen');
    expect(lines.join('')).toContain('"msg":"seen"');
    live.apply({ 'argocd-cmd-params-cm': { version: 2, data: {} } });
    expect([logger.level, child.level, grandchild.level]).toEqual(['info', 'info', 'info']);
    // A log level the environment gave stays.
    const pinned = loadConfigReport(commonSettings, { argv: [], env: { CAPSTAN_LOG_LEVEL: 'warn' } });
    const other = createLogger('repo', { level: 'warn', destination: sink });
    const live2 = new LiveSettings(commonSettings, pinned.config, pinned.report, 'repo');
    followLogLevel(other, live2);
    const change = live2.apply({
      'argocd-cmd-params-cm': { version: 1, data: { 'reposerver.log.level': 'debug' } },
    });
    expect(other.level).toBe('warn');
    expect(change.shadowed).toEqual([
      'log.level (argocd-cmd-params-cm: reposerver.log.level) is overridden by environment CAPSTAN_LOG_LEVEL',
    ]);
  });
});
