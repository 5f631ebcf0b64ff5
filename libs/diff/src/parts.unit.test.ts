import type { Loose } from './test-support/loose.js';
import { describe, expect, it } from 'vitest';
import { parseQuantity, canonicallyEqual } from './canonical.js';
import { compareOptionsOf } from './compare-options.js';
import { compileIgnoreDifferences, entryMatches, parsePointer } from './ignore.js';
import { jqDeleteSync, JqError } from './jq.js';
import { fieldSetOf, itemChild, withoutOwned } from './managed-fields.js';
import { hideSecretData } from './mask.js';
import { renderDiff } from './render.js';

describe('quantities and int-or-string', () => {
  it('parses quantities exactly', () => {
    const eq = (a: string, b: string) => canonicallyEqual(a, b, 'cpu', 'limits');
    expect(eq('0.5', '500m')).toBe(true);
    expect(eq('1Gi', '1073741824')).toBe(true);
    expect(eq('1k', '1000')).toBe(true);
    expect(eq('1e3', '1k')).toBe(true);
    expect(eq('1Mi', '1M')).toBe(false);
    expect(eq('100m', '0.1')).toBe(true);
    expect(parseQuantity('abc')).toBeUndefined();
    expect(parseQuantity('1'.repeat(65))).toBeUndefined();
    expect(canonicallyEqual(2, '2', 'storage', undefined)).toBe(true);
  });
  it('only where Kubernetes canonicalises', () => {
    expect(canonicallyEqual('1k', '1000', 'value', 'env')).toBe(false);
    expect(canonicallyEqual(8080, '8080', 'targetPort', undefined)).toBe(true);
    expect(canonicallyEqual(8080, '8081', 'targetPort', undefined)).toBe(false);
    expect(canonicallyEqual(1, '1', 'replicas', 'spec')).toBe(false);
  });
});

describe('ignoreDifferences compilation', () => {
  it('rejects a non-pointer and a jq syntax error', async () => {
    await expect(
      compileIgnoreDifferences([{ kind: 'Deployment', jsonPointers: ['spec/replicas'] }]),
    ).rejects.toThrow(/not a JSON pointer/);
    await expect(
      compileIgnoreDifferences([{ kind: 'Deployment', jqPathExpressions: ['.spec['] }]),
    ).rejects.toThrow(/jqPathExpressions/);
    await expect(
      compileIgnoreDifferences([{ kind: 'Deployment', jqPathExpressions: ['.a'.repeat(3000)] }]),
    ).rejects.toThrow(/longer/);
  });
  it('accepts an expression that only fails on an empty object', async () => {
    await expect(
      compileIgnoreDifferences([{ kind: 'D', jqPathExpressions: ['.spec.containers[] | .image'] }]),
    ).resolves.toBeDefined();
  });
  it('parses RFC 6901 escapes', () => {
    expect(parsePointer('/metadata/annotations/a~1b~0c')).toEqual(['metadata', 'annotations', 'a/b~c']);
    expect(parsePointer('')).toEqual([]);
  });
  it('matches group and kind as globs, name and namespace exactly', () => {
    const obj = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a' } };
    expect(entryMatches({ group: 'apps', kind: 'Deployment' }, obj)).toBe(true);
    expect(entryMatches({ kind: 'Deployment' }, obj)).toBe(false);
    expect(entryMatches({ group: 'app*', kind: '*', namespace: 'a' }, obj)).toBe(true);
    expect(entryMatches({ group: '*', kind: '*', namespace: 'b' }, obj)).toBe(false);
    expect(entryMatches({ kind: 'ConfigMap' }, { apiVersion: 'v1', kind: 'ConfigMap' })).toBe(true);
  });
});

describe('jq', () => {
  it('deletes what the path expression selects', () => {
    expect(jqDeleteSync({ a: { b: 1, c: 2 } }, '.a.b')).toEqual({ a: { c: 2 } });
  });
  it('is bounded in time: a runaway expression times out, and jq works again afterwards', () => {
    expect(() => jqDeleteSync({}, '[range(1e12)] | .x', 200)).toThrow(JqError);
    expect(() => jqDeleteSync({}, '[range(1e12)] | .x', 200)).toThrow(/timed out/);
    expect(jqDeleteSync({ a: 1, b: 2 }, '.a', 10_000)).toEqual({ b: 2 });
  });
  it('reports an expression that yields several objects', () => {
    expect(() => jqDeleteSync({ a: 1 }, '.a), (.b')).toThrow(/multiple objects/);
  });
});

describe('managed fields', () => {
  const live = {
    metadata: {
      managedFields: [
        {
          manager: 'capstan',
          fieldsV1: {
            'f:spec': { 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:name': {} } } },
          },
        },
        {
          manager: 'hpa',
          fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:list': { 'i:1': {} }, 'f:set': { 'v:"b"': {} } } },
        },
        { manager: 'bad' },
      ],
    },
  };
  it('finds list items by key fields, value and index', () => {
    const own = fieldSetOf(live, (m) => m === 'capstan')!;
    const ports = (own['f:spec'] as Loose)['f:ports'];
    expect(itemChild(ports, { containerPort: 80, protocol: 'TCP', name: 'x' }, 0)).toBeDefined();
    expect(itemChild(ports, { containerPort: 81, protocol: 'TCP' }, 0)).toBeUndefined();
    const hpa = fieldSetOf(live, (m) => m === 'hpa');
    expect(
      withoutOwned({ spec: { replicas: 3, list: ['a', 'b', 'c'], set: ['a', 'b'], other: 1 } }, hpa),
    ).toEqual({
      spec: { list: ['a', 'c'], set: ['a'], other: 1 },
    });
    expect(fieldSetOf({}, () => true)).toBeUndefined();
  });
});

describe('compare-options', () => {
  it('reads IgnoreExtraneous and ServerSideDiff', () => {
    const annotated = (v: string) => ({
      metadata: { annotations: { 'argocd.argoproj.io/compare-options': v } },
    });
    expect(compareOptionsOf(annotated('IgnoreExtraneous'))).toEqual({
      ignoreExtraneous: true,
      serverSideDiff: undefined,
    });
    expect(compareOptionsOf(annotated('ServerSideDiff=false'))).toEqual({
      ignoreExtraneous: false,
      serverSideDiff: false,
    });
    expect(compareOptionsOf(undefined, annotated('ServerSideDiff=true')).serverSideDiff).toBe(true);
  });
});

describe('hideSecretData', () => {
  it('gives equal values equal runs and different values different runs, as Argo', () => {
    const s = (data: Record<string, string>, annotations: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', annotations },
      data,
    });
    const [a, b, c] = hideSecretData(
      s(
        { k: 'AAA=', same: 'Qg==' },
        { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"AAA="}}' },
      ),
      s({ k: 'QkI=', same: 'Qg==' }),
      s({ k: 'AAA=' }),
    );
    expect(a!.data).toEqual({ k: '++++++++', same: '++++++++' });
    expect(b!.data).toEqual({ k: '++++++++++++', same: '++++++++' });
    expect(c!.data).toEqual({ k: '++++++++' });
    expect(JSON.stringify(a)).not.toContain('AAA=');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } };
    expect(hideSecretData(cm)[0]).toBe(cm);
  });
});

describe('renderDiff', () => {
  const cm = (v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'n' },
    data: { a: '1', key: v },
  });
  it('renders argocd app diff’s header and a unified diff, live (-) to git (+)', () => {
    const out = renderDiff(cm('new'), cm('old'));
    expect(out.split('\n').slice(0, 3)).toEqual(['===== /ConfigMap n/c ======', '--- c-live.yaml', '+++ c']);
    expect(out).toContain('\n-  key: old\n+  key: new\n');
    expect(out).toMatch(/@@ -\d+,\d+ \+\d+,\d+ @@/);
  });
  it('is empty when both render the same, colours on request', () => {
    expect(renderDiff(cm('x'), cm('x'))).toBe('');
    expect(renderDiff(undefined, undefined)).toBe('');
    expect(renderDiff(cm('new'), cm('old'), { color: true })).toContain('\u001b[32m+  key: new\u001b[0m');
    expect(renderDiff(undefined, cm('old'))).toContain('-  key: old');
    expect(
      renderDiff({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }, undefined),
    ).toContain('===== apps/Deployment /d ======');
  });
});
