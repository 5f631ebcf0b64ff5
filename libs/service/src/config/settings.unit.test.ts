import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfig, describeSettings } from './settings.js';
import { booleanSetting } from './common.js';
import { ValidationError } from '../errors/errors.js';

const settings = {
  'application.sync.impersonation.enabled': {
    schema: booleanSetting,
    default: false,
    env: 'CAPSTAN_IMPERSONATION_ENABLED',
    flags: ['enable-impersonation'],
    description: 'sync as the resolved ServiceAccount',
  },
  'sync.parallelism': {
    schema: z.coerce.number().int().min(1).max(512),
    default: 8,
    description: 'parallel syncs',
  },
  'credentials.key': { schema: z.string().min(32), secret: true, description: 'encryption key' },
};

function configFile(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-config-'));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  return join(dir, 'config.yaml');
}

const key = 'k'.repeat(32);

describe('configuration precedence: flag > environment > file > default', () => {
  it('uses the default when nothing else says', () => {
    const c = loadConfig(settings, { argv: [], env: { CAPSTAN_CREDENTIALS_KEY: key } });
    expect(c['application.sync.impersonation.enabled']).toBe(false);
    expect(c['sync.parallelism']).toBe(8);
  });

  it('file beats default, environment beats file, flag beats environment', () => {
    const file = configFile(
      'application:\n  sync:\n    impersonation:\n      enabled: true\nsync:\n  parallelism: 3\n',
    );
    const env = { CAPSTAN_CREDENTIALS_KEY: key };
    expect(loadConfig(settings, { argv: ['--config', file], env })['sync.parallelism']).toBe(3);
    expect(
      loadConfig(settings, { argv: ['--config', file], env })['application.sync.impersonation.enabled'],
    ).toBe(true);
    expect(
      loadConfig(settings, { argv: ['--config', file], env: { ...env, CAPSTAN_SYNC_PARALLELISM: '5' } })[
        'sync.parallelism'
      ],
    ).toBe(5);
    expect(
      loadConfig(settings, {
        argv: ['--config', file, '--sync-parallelism', '7'],
        env: { ...env, CAPSTAN_SYNC_PARALLELISM: '5' },
      })['sync.parallelism'],
    ).toBe(7);
    expect(
      loadConfig(settings, {
        argv: ['--enable-impersonation'],
        env: { ...env, CAPSTAN_IMPERSONATION_ENABLED: 'false' },
      })['application.sync.impersonation.enabled'],
    ).toBe(true);
  });
});

describe('bad configuration stops start-up naming the setting', () => {
  it('names the setting, its source and what was expected', () => {
    const attempt = () =>
      loadConfig(settings, { argv: ['--sync-parallelism', 'many'], env: { CAPSTAN_CREDENTIALS_KEY: key } });
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(/sync\.parallelism: invalid value from flag --sync-parallelism \(got "many"\)/);
  });

  it('never echoes a secret value and offers no flag for it', () => {
    let error: unknown;
    try {
      loadConfig(settings, { argv: [], env: { CAPSTAN_CREDENTIALS_KEY: 'short-secret-value' } });
    } catch (err) {
      error = err;
    }
    expect(String((error as Error).message)).toMatch(
      /credentials\.key: invalid value from environment CAPSTAN_CREDENTIALS_KEY/,
    );
    expect(String((error as Error).message)).not.toContain('short-secret-value');
    expect(() => loadConfig(settings, { argv: ['--credentials-key', key], env: {} })).toThrow(
      /unknown option '--credentials-key'/i,
    );
  });

  it('refuses unknown flags', () => {
    expect(() =>
      loadConfig(settings, { argv: ['--no-such-thing'], env: { CAPSTAN_CREDENTIALS_KEY: key } }),
    ).toThrow(/argv/);
  });

  it('documents every setting with its environment variable and flag', () => {
    const doc = describeSettings(settings);
    expect(doc).toContain(
      '| `application.sync.impersonation.enabled` | `CAPSTAN_IMPERSONATION_ENABLED` | `--enable-impersonation` |',
    );
    expect(doc).toContain('| `credentials.key` | `CAPSTAN_CREDENTIALS_KEY` | — |');
  });
});
