import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { addressAllowed, checkEgress, DEFAULT_DENIED_NETWORKS, egressPolicy } from './egress.js';
import { EgressDeniedError } from './git-errors.js';

const defaults = egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '' });

describe('egress policy', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '169.254.169.254',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    'fd00:ec2::254',
    '224.0.0.251',
  ])('denies %s by default', (address) => {
    expect(addressAllowed(defaults, address)).toBe(false);
  });

  it.each(['140.82.112.3', '10.0.0.7', '192.168.1.20', '2606:50c0:8000::153'])(
    'allows %s by default',
    (address) => {
      expect(addressAllowed(defaults, address)).toBe(true);
    },
  );

  it('lets an allowed entry win over a denied network, and only that entry', () => {
    const policy = egressPolicy({
      denied: `${DEFAULT_DENIED_NETWORKS},10.0.0.0/8`,
      allowed: '10.1.2.3,127.0.0.1',
    });
    expect(addressAllowed(policy, '10.1.2.3')).toBe(true);
    expect(addressAllowed(policy, '10.1.2.4')).toBe(false);
    expect(addressAllowed(policy, '127.0.0.1')).toBe(true);
    expect(addressAllowed(policy, '127.0.0.2')).toBe(false);
  });

  it('names the setting and the entry it cannot read', () => {
    for (const [denied, allowed, field, entry] of [
      ['10.0.0.0/33', '', 'egress.denied-networks', '10.0.0.0/33'],
      ['', 'gitlab.internal', 'egress.allowed-networks', 'gitlab.internal'],
      ['::1/129', '', 'egress.denied-networks', '::1/129'],
    ]) {
      const err = (() => {
        try {
          egressPolicy({ denied: denied!, allowed: allowed! });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).violations[0]).toMatchObject({
        field,
        description: expect.stringContaining(`"${entry}"`),
      });
    }
  });
});

describe('checkEgress', () => {
  it('refuses a repository on the loopback interface, by address and by name', async () => {
    for (const url of ['http://127.0.0.1:9/r.git', 'https://localhost/r.git', 'http://2130706433/r']) {
      await expect(checkEgress(defaults, url, `repository ${url}`)).rejects.toThrow(EgressDeniedError);
    }
    await expect(checkEgress(defaults, 'ssh://git@169.254.169.254/r', 'repository r')).rejects.toThrow(
      /host 169\.254\.169\.254 resolves to 169\.254\.169\.254, a network the repo service may not reach/,
    );
  });

  it('pins HTTP(S) to the checked addresses and turns redirects off; SSH gets no pin', async () => {
    const local = egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '127.0.0.1,::1' });
    const pin = await checkEgress(local, 'http://localhost:8123/org/r.git', 'r');
    expect(pin[1]).toMatch(/^http\.curloptResolve=localhost:8123:/);
    expect(pin[1]).toContain('127.0.0.1');
    expect(pin).toContain('http.followRedirects=false');
    expect(await checkEgress(local, 'https://[::1]/r.git', 'r')).toContain(
      'http.curloptResolve=::1:443:[::1]',
    );
    expect(await checkEgress(local, 'ssh://git@127.0.0.1/r', 'r')).toEqual([]);
  });

  it('is unavailable (retryable), not denied, when the host does not resolve', async () => {
    await expect(checkEgress(defaults, 'https://no-such-host.invalid/r.git', 'r')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      retryable: true,
    });
  });
});
