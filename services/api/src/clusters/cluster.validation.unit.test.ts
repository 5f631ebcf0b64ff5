import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { credentialTypeOf, validateClusterRegistration } from './cluster.validation.js';

function violations(input: unknown): string[] {
  try {
    validateClusterRegistration(input);
  } catch (err) {
    if (err instanceof ValidationError) return err.violations.map((v) => `${v.field}: ${v.description}`);
    throw err;
  }
  return [];
}

describe('cluster registration', () => {
  it('accepts a bearer token and names the cluster after its host by default', () => {
    const reg = validateClusterRegistration({
      server: 'https://10.0.0.1:6443/',
      config: { bearerToken: 't' },
    });
    expect(reg).toMatchObject({ server: 'https://10.0.0.1:6443', name: '10.0.0.1:6443' });
    expect(credentialTypeOf(reg.config)).toBe('bearer');
  });

  it('refuses bad input with field paths and never echoes a secret', () => {
    const secret = 'secret-value-123';
    const problems = violations({
      server: 'ftp://x',
      config: { bearerToken: secret, username: 'u', password: '', tlsClientConfig: { caData: 'not pem' } },
      extra: 1,
    });
    expect(problems.join('\n')).not.toContain(secret);
    expect(problems).toContain('extra: unknown field');
    expect(problems.some((p) => p.startsWith('config.tlsClientConfig.caData'))).toBe(true);
    expect(violations({ server: 'ftp://x' })).toContain('server: must be an http(s) URL');
    expect(violations({ server: 'https://u:p@x' })).toContain(
      'server: must not carry credentials; use config',
    );
    expect(
      violations({ server: 'https://x', config: { bearerToken: 't', username: 'u', password: 'p' } })[0],
    ).toMatch(/^config: give one credential/);
  });
});
