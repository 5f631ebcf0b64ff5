// Provider detection, signature checks and payload reading on Argo CD's fixtures (testdata/).
import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { detectProvider, parseDelivery, sameSecret, verifySignature } from './providers.js';

const fixture = (name: string) => readFileSync(new URL(`./testdata/${name}.json`, import.meta.url));
const body = Buffer.from('{"ref":"refs/heads/main"}');
const mac = (alg: string, key: string) => createHmac(alg, key).update(body).digest('hex');

describe('webhook providers', () => {
  it('tells providers apart by their headers in Argo CD order', () => {
    expect(detectProvider({ 'x-gogs-event': 'push', 'x-github-event': 'push' })).toEqual({
      provider: 'gogs',
      event: 'push',
    });
    expect(detectProvider({ 'x-github-event': 'push' })).toEqual({ provider: 'github', event: 'push' });
    expect(detectProvider({ 'x-github-event': 'package' })).toBeUndefined();
    expect(detectProvider({ 'x-gitlab-event': 'Push Hook' })).toEqual({
      provider: 'gitlab',
      event: 'Push Hook',
    });
    expect(detectProvider({ 'x-hook-uuid': 'u', 'x-event-key': 'repo:push' })).toEqual({
      provider: 'bitbucket',
      event: 'repo:push',
    });
    expect(detectProvider({ 'x-event-key': 'repo:refs_changed' })).toEqual({
      provider: 'bitbucketserver',
      event: 'repo:refs_changed',
    });
    expect(detectProvider({ 'x-vss-activityid': 'x' })).toBeUndefined();
    expect(detectProvider({})).toBeUndefined();
  });

  it('compares secrets in constant time, whatever their lengths', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
    expect(sameSecret('', 'x')).toBe(false);
  });

  it('verifies each provider as go-playground/webhooks does', () => {
    const k = 'secret';
    expect(
      verifySignature('github', { 'x-hub-signature-256': `sha256=${mac('sha256', k)}` }, body, k),
    ).toBeUndefined();
    expect(
      verifySignature('github', { 'x-hub-signature': `sha1=${mac('sha1', k)}` }, body, k),
    ).toBeUndefined();
    expect(
      verifySignature('github', { 'x-hub-signature-256': `sha256=${mac('sha256', 'other')}` }, body, k),
    ).toBe('HMAC verification failed');
    expect(verifySignature('github', { 'x-hub-signature': `sha1=${mac('sha1', 'other')}` }, body, k)).toBe(
      'HMAC verification failed',
    );
    expect(verifySignature('github', {}, body, k)).toBe('missing X-Hub-Signature-256 header');
    expect(
      verifySignature('bitbucketserver', { 'x-hub-signature': `sha256=${mac('sha256', k)}` }, body, k),
    ).toBeUndefined();
    expect(verifySignature('bitbucketserver', {}, body, k)).toBe('missing X-Hub-Signature header');
    expect(verifySignature('bitbucketserver', { 'x-hub-signature': 'sha256=00' }, body, k)).toBe(
      'HMAC verification failed',
    );
    expect(verifySignature('gogs', { 'x-gogs-signature': mac('sha256', k) }, body, k)).toBeUndefined();
    expect(verifySignature('gogs', { 'x-gitea-signature': mac('sha256', k) }, body, k)).toBeUndefined();
    expect(verifySignature('gogs', { 'x-gogs-signature': mac('sha256', 'x') }, body, k)).toBe(
      'HMAC verification failed',
    );
    expect(verifySignature('gogs', {}, body, k)).toBe('missing X-Gogs-Signature header');
    expect(verifySignature('gitlab', { 'x-gitlab-token': k }, body, k)).toBeUndefined();
    expect(verifySignature('gitlab', { 'x-gitlab-token': 'x' }, body, k)).toBe('token verification failed');
    expect(verifySignature('gitlab', {}, body, k)).toBe('missing X-Gitlab-Token header');
    expect(verifySignature('bitbucket', { 'x-hook-uuid': k }, body, k)).toBeUndefined();
    expect(verifySignature('bitbucket', { 'x-hook-uuid': 'x' }, body, k)).toBe('UUID verification failed');
  });

  it("reads Argo CD's fixtures", () => {
    expect(parseDelivery('github', 'push', {}, fixture('github-commit-event'))).toEqual({
      kind: 'push',
      push: expect.objectContaining({
        webURLs: ['https://github.com/jessesuen/test-repo'],
        ref: 'refs/heads/master',
        revision: 'master',
        touchedHead: true,
        after: '63738bb582c8b540af7bcfc18f87c575c3ed66e0',
      }),
    });
    const tag = parseDelivery('github', 'push', {}, fixture('github-tag-event'));
    expect(tag).toMatchObject({ kind: 'push', push: { touchedHead: false } });
    expect(parseDelivery('gitlab', 'Push Hook', {}, fixture('gitlab-event'))).toMatchObject({
      kind: 'push',
      push: { webURLs: ['https://gitlab.com/group/name'], revision: 'master', touchedHead: true },
    });
    expect(
      parseDelivery('bitbucketserver', 'repo:refs_changed', {}, fixture('bitbucket-server-event')),
    ).toMatchObject({
      kind: 'push',
      push: {
        webURLs: [
          'ssh://git@bitbucketserver:7999/myproject/test-repo.git',
          'https://bitbucketserver/scm/myproject/test-repo.git',
        ],
        ref: 'refs/heads/master',
        revision: 'master',
        after: '22671f0349857934857983457983475ec39f196b',
      },
    });
    expect(parseDelivery('gogs', 'push', {}, fixture('gogs-event'))).toMatchObject({
      kind: 'push',
      push: { webURLs: ['http://gogs-server/john/repo-test'], revision: 'master', touchedHead: true },
    });
    expect(parseDelivery('bitbucket', 'repo:push', {}, fixture('bitbucket-cloud-event'))).toMatchObject({
      kind: 'push',
      push: {
        webURLs: ['https://bitbucket.org/argo/argocd-example-apps'],
        revision: 'master',
        touchedHead: true,
      },
    });
  });

  it('reads a form-encoded GitHub delivery, and answers pings, other events and bad bodies', () => {
    const form = Buffer.from(`payload=${encodeURIComponent(fixture('github-commit-event').toString())}`);
    expect(
      parseDelivery('github', 'push', { 'content-type': 'application/x-www-form-urlencoded' }, form),
    ).toMatchObject({ kind: 'push', push: { revision: 'master' } });
    expect(parseDelivery('github', 'ping', {}, fixture('github-ping-event'))).toEqual({
      kind: 'ignored',
      reason: 'ping event',
    });
    expect(parseDelivery('bitbucketserver', 'diagnostics:ping', {}, Buffer.from(''))).toMatchObject({
      kind: 'ignored',
    });
    expect(parseDelivery('github', 'issues', {}, body)).toEqual({
      kind: 'unhandled',
      reason: 'event "issues" is not handled',
    });
    expect(parseDelivery('gitlab', 'Push Hook', {}, Buffer.from('{'))).toEqual({
      kind: 'unhandled',
      reason: 'payload is not valid JSON',
    });
    expect(parseDelivery('github', 'push', {}, Buffer.from('[]'))).toEqual({
      kind: 'ignored',
      reason: 'no repository URL in the payload',
    });
    // GitLab system hooks other than pushes carry no push.
    expect(
      parseDelivery('gitlab', 'System Hook', {}, Buffer.from('{"object_kind":"merge_request"}')),
    ).toMatchObject({ kind: 'ignored' });
    // A deleted branch (after = zeros) has no commit to announce.
    const deleted = Buffer.from(
      JSON.stringify({
        ref: 'refs/heads/x',
        after: '0'.repeat(40),
        repository: { html_url: 'https://h/o/r' },
      }),
    );
    const read = parseDelivery('github', 'push', {}, deleted);
    expect(read.kind === 'push' && 'after' in read.push).toBe(false);
  });
});
