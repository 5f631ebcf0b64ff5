import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { effectiveSettings } from './effective-settings.js';

const settings = {
  'sync.parallelism': { schema: z.number(), default: 4, description: 'workers' },
  'auth.service-tokens': { schema: z.string(), default: '', secret: true, description: 'tokens' },
  'resource.exclusions': { schema: z.unknown(), default: [], description: 'kinds left out' },
};

describe('effectiveSettings', () => {
  it('shows values (secrets as set or unset) with their source, in short or in full', () => {
    const values: Record<string, unknown> = {
      'sync.parallelism': 8,
      'auth.service-tokens': 'api=secret-token-value',
      'resource.exclusions': [{ kinds: ['Secret'] }],
    };
    const read = {
      value: (k: string) => values[k],
      source: (k: string) =>
        k === 'sync.parallelism' ? { kind: 'flag' as const, detail: 'flag --sync-parallelism' } : undefined,
    };
    const short = effectiveSettings('sync', settings, read, false);
    expect(short).toEqual([
      {
        scope: 'sync',
        key: 'sync.parallelism',
        value: '8',
        source: 'flag',
        effect: 'environment CAPSTAN_SYNC_PARALLELISM',
      },
      {
        scope: 'sync',
        key: 'auth.service-tokens',
        value: '(set)',
        source: 'unknown',
        effect: 'environment CAPSTAN_AUTH_SERVICE_TOKENS',
      },
      {
        scope: 'sync',
        key: 'resource.exclusions',
        value: '[{"kinds":["Secret"]}]',
        source: 'unknown',
        effect: 'environment CAPSTAN_RESOURCE_EXCLUSIONS',
      },
    ]);
    expect(JSON.stringify(short)).not.toContain('secret-token-value');
    expect(effectiveSettings('sync', settings, read, true)[0]?.source).toBe('flag --sync-parallelism');
    values['auth.service-tokens'] = '';
    expect(effectiveSettings('sync', settings, read, false)[1]?.value).toBe('(unset)');
  });
});
