// The spliced `app list` answer must be exactly what building and encoding the message would give,
// over gRPC (bytes) and HTTP (JSON), including lengths that need multi-byte varints.
import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import type { StoredApplication } from '../applications/application.repository.js';
import { encodedApplicationList } from './application-list-encoding.js';
import { applicationView } from './views.js';
import { validateApplication } from '../applications/application.validation.js';

function stored(name: string, extra: Partial<StoredApplication> = {}, labelBytes = 0): StoredApplication {
  return {
    application: validateApplication({
      metadata: {
        name,
        namespace: 'argocd',
        labels: { tier: 'web', ...(labelBytes ? { padding: 'x'.repeat(labelBytes) } : {}) },
      },
      spec: {
        project: 'team-a',
        source: { repoURL: 'https://git.example.com/a.git', path: name, targetRevision: 'HEAD' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'ns' },
      },
    }),
    project: 'team-a',
    version: 3,
    uid: `uid-${name}`,
    createdAt: new Date('2026-11-20T10:00:00Z'),
    updatedAt: new Date('2026-11-20T11:00:00Z'),
    syncStatus: 'Synced',
    healthStatus: 'Healthy',
    operationId: null,
    revision: 'abc123',
    revisions: [],
    reconciledAt: new Date('2026-11-20T12:00:00Z'),
    healthMessage: '',
    resources: [
      {
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
        namespace: 'ns',
        name,
        status: 'Synced',
        health: { status: 'Healthy' },
      },
    ],
    conditions: [],
    ...extra,
  };
}

function built(items: StoredApplication[], nextPageToken: string) {
  const view = { items: items.map((a) => applicationView(a)), nextPageToken };
  return {
    proto: Buffer.from(apiv1.ApplicationList.encode(apiv1.ApplicationList.fromJSON(view)).finish()),
    json: JSON.stringify(view),
  };
}

describe('encodedApplicationList', () => {
  const cases: [string, StoredApplication[], string][] = [
    ['an empty page', [], ''],
    ['an empty page with a token', [], 'WyJhcmdvY2QiLCJ4Il0'],
    ['small items', [stored('a'), stored('b', { reconciledAt: null, revision: null })], ''],
    ['items over 127 and 16,383 bytes', [stored('c', {}, 200), stored('d', {}, 20_000)], 'tok-ü'],
  ];
  it.each(cases)('encodes %s as building the message would', (_, items, token) => {
    const encoded = encodedApplicationList(items, token);
    const expected = built(items, token);
    expect(encoded.proto().equals(expected.proto)).toBe(true);
    expect(encoded.json()).toBe(expected.json);
    expect(apiv1.ApplicationList.decode(encoded.proto()).items.map((a) => a.metadata?.name)).toEqual(
      items.map((a) => a.application.metadata.name),
    );
  });

  it('encodes a new version of an application afresh', () => {
    const v1 = stored('e');
    expect(
      apiv1.ApplicationList.decode(encodedApplicationList([v1], '').proto()).items[0]?.status?.sync?.status,
    ).toBe('Synced');
    const v2 = stored('e', { version: 4, syncStatus: 'OutOfSync' });
    const decoded = apiv1.ApplicationList.decode(encodedApplicationList([v1, v2], '').proto());
    expect(decoded.items.map((a) => a.status?.sync?.status)).toEqual(['Synced', 'OutOfSync']);
    expect(JSON.parse(encodedApplicationList([v2], '').json()).items[0].metadata.resourceVersion).toBe(4);
  });
});
