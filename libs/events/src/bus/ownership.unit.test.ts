// Every subject of the catalog has exactly one publisher in the bus permissions (@capstan/bus-auth):
// domain events and commands their owning service, external events the other systems.
import { describe, expect, it } from 'vitest';
import { publishedBy, serviceUsers } from '@capstan/bus-auth';
import { allEventDefinitions } from '../catalog/index.js';
import { syncRequest } from '../catalog/sync.js';
import { gitPush } from '../catalog/repository.js';

const matches = (pattern: string, subject: string) => {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
};

describe('bus ownership', () => {
  it('gives every event and command exactly one publishing service, and no service an ext subject but the webhook push', () => {
    for (const d of allEventDefinitions) {
      const owners = serviceUsers.filter((u) => publishedBy[u].some((p) => matches(p, d.subject)));
      // The api's git webhook (docs/webhooks.md) announces verified pushes: ext.git.push only.
      if (d.type === gitPush.type) expect(owners, d.type).toEqual(['api']);
      else expect(owners, d.type).toHaveLength(d.channel === 'ext' ? 0 : 1);
    }
    // Exactly that subject: ext.git.sync.request would let the api pass for the git source's account.
    expect(publishedBy.api.filter((p) => p.startsWith('ext.'))).toEqual(['ext.git.push']);
  });

  it('refuses a sync request that carries objects inline', () => {
    const parsed = syncRequest.data.safeParse({
      operationId: 'x',
      application: { name: 'guestbook', namespace: 'argocd' },
      manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['manifests'] });
  });
});
