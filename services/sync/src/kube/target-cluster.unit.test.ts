import { describe, expect, it } from 'vitest';
import { ClusterTimeoutError } from './bounded-request.js';
import { ImpersonationError, kubeConfigFor } from './kube-config.js';
import { isUnreachable } from './kube-errors.js';

const conn = {
  name: 'c',
  server: 'https://127.0.0.1:6443',
  bearerToken: 'control-plane-token',
  caData: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n',
};

describe('the client a sync writes with', () => {
  it('given a ServiceAccount identity, when the kubeconfig is built, then every request of it impersonates that user', () => {
    const kc = kubeConfigFor(conn, {
      kind: 'service-account',
      username: 'system:serviceaccount:team-a:deployer',
    });
    expect(kc.getCurrentUser()).toMatchObject({
      token: 'control-plane-token',
      impersonateUser: 'system:serviceaccount:team-a:deployer',
    });
    expect(kc.getCurrentCluster()).toMatchObject({ server: conn.server, skipTLSVerify: false });
  });

  it('given impersonation on but an empty username, when the kubeconfig is built, then it refuses (fail closed)', () => {
    expect(() => kubeConfigFor(conn, { kind: 'service-account', username: '' })).toThrow(ImpersonationError);
    expect(() => kubeConfigFor(conn, { kind: 'service-account', username: '  ' })).toThrow(/fail closed/);
  });

  it('given the control-plane identity (impersonation off), when the kubeconfig is built, then nothing is impersonated', () => {
    expect(kubeConfigFor(conn, { kind: 'control-plane' }).getCurrentUser()?.impersonateUser).toBeUndefined();
  });
});

describe('which failures are retried later', () => {
  it.each([
    [new ClusterTimeoutError('no answer'), true],
    [
      Object.assign(new Error('request to https://x failed, reason: connect ECONNREFUSED 127.0.0.1:1'), {}),
      true,
    ],
    [Object.assign(new Error('unavailable'), { code: 503 }), true],
    [Object.assign(new Error('too many'), { code: 429 }), true],
    [Object.assign(new Error('forbidden'), { code: 403 }), false],
    [Object.assign(new Error('invalid'), { code: 422 }), false],
    [
      Object.assign(new Error('14 UNAVAILABLE'), {
        code: 14,
        details: 'No connection established',
        metadata: {},
      }),
      true,
    ],
    [Object.assign(new Error('3 INVALID_ARGUMENT'), { code: 3, details: 'bad path', metadata: {} }), false],
  ])('given %s, when classified, then retried=%s', (err, retried) => {
    expect(isUnreachable(err)).toBe(retried);
  });
});
