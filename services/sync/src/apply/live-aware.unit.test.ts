import { describe, expect, it } from 'vitest';
import { compileIgnoreDifferences } from '@capstan/diff';
import type { KubeObject } from '../manifests/manifest-source.js';
import {
  beforeWriteFor,
  keepIgnoredLiveValues,
  pointerTokens,
  unsupportedRespectEntries,
} from './live-aware.js';

const deployment = (replicas: number | undefined, image = 'web:1'): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      template: { spec: { containers: [{ name: 'web', image }] } },
    },
  }) as KubeObject;

describe('sync options that read the live object', () => {
  it('given JSON pointers with escapes, when split, then RFC 6901 tokens come out', () => {
    expect(pointerTokens('/metadata/annotations/example.com~1owner')).toEqual([
      'metadata',
      'annotations',
      'example.com/owner',
    ]);
    expect(pointerTokens('/a~0b')).toEqual(['a~b']);
  });

  it('given RespectIgnoreDifferences on /spec/replicas, when the live value differs, then the live value is kept and the rest is git', () => {
    const entries = [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }];
    const out = keepIgnoredLiveValues(deployment(1, 'web:2'), deployment(5, 'web:1'), entries);
    expect(out).toEqual(deployment(5, 'web:2'));
    // Absent live: git's value goes (the field is left to git only when the object is new).
    expect(keepIgnoredLiveValues(deployment(1), deployment(undefined), entries)).toEqual(
      deployment(undefined),
    );
    // Other kinds and names are untouched.
    expect(
      keepIgnoredLiveValues(deployment(1), deployment(5), [
        { group: 'apps', kind: 'Deployment', name: 'api', jsonPointers: ['/spec/replicas'] },
      ]),
    ).toEqual(deployment(1));
  });

  it('given ApplyOutOfSyncOnly, when the live object matches, then the write is skipped; when it differs, then it is written', async () => {
    const before = beforeWriteFor({
      options: { applyOutOfSyncOnly: true, respectIgnoreDifferences: false },
      entries: [],
      ignore: await compileIgnoreDifferences([]),
    })!;
    const live = { ...deployment(2), status: { readyReplicas: 2 } } as KubeObject;
    expect(before(undefined, deployment(2), live)).toEqual({
      skip: 'unchanged: live state already matches (ApplyOutOfSyncOnly)',
    });
    expect(before(undefined, deployment(3), live)).toEqual({ object: deployment(3) });
    expect(before(undefined, deployment(3), undefined)).toEqual({ object: deployment(3) });
    expect(
      beforeWriteFor({
        options: { applyOutOfSyncOnly: false, respectIgnoreDifferences: false },
        entries: [],
        ignore: await compileIgnoreDifferences([]),
      }),
    ).toBeUndefined();
  });

  it('given ignoreDifferences with jq or managers, when RespectIgnoreDifferences is on, then each is reported', () => {
    expect(
      unsupportedRespectEntries([
        { group: 'apps', kind: 'Deployment', jqPathExpressions: ['.spec.replicas'] },
        { kind: 'ConfigMap', jsonPointers: ['/data'] },
      ]),
    ).toEqual([
      'RespectIgnoreDifferences: ignoreDifferences of apps/Deployment: only jsonPointers keep their live value on sync; jqPathExpressions and managedFieldsManagers are applied as git declares them',
    ]);
  });
});
