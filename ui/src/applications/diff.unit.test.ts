import { describe, expect, it } from 'vitest';
import { MAX_CHANGES, fieldDiff, fieldDiffOfStates, formatChange, pretty } from './diff';

describe('field diff', () => {
  it('names each changed leaf by its path, desired then live', () => {
    const desired = { kind: 'ConfigMap', data: { greeting: 'hello', mode: 'a' } };
    const live = { kind: 'ConfigMap', data: { greeting: 'bonjour', mode: 'a' } };
    const { changes, truncated } = fieldDiff(desired, live);
    expect(changes).toEqual([{ path: 'data.greeting', op: 'changed', desired: 'hello', live: 'bonjour' }]);
    expect(truncated).toBe(false);
    expect(formatChange(changes[0]!)).toBe('data.greeting: hello → bonjour');
  });

  it('tells a field only git has from one only the cluster has', () => {
    const { changes } = fieldDiff({ spec: { replicas: 2 } }, { spec: { paused: true } });
    expect(changes).toEqual([
      { path: 'spec.paused', op: 'extra', live: true },
      { path: 'spec.replicas', op: 'missing', desired: 2 },
    ]);
    expect(formatChange(changes[1]!)).toBe('spec.replicas: 2 → (none)');
  });

  it('pairs named list items by name and quotes keys that are not identifiers', () => {
    const desired = {
      metadata: { labels: { 'app.kubernetes.io/name': 'web' } },
      containers: [
        { name: 'web', image: 'web:2' },
        { name: 'sidecar', image: 'side:1' },
      ],
      args: ['a', 'b'],
    };
    const live = {
      metadata: { labels: { 'app.kubernetes.io/name': 'api' } },
      containers: [
        { name: 'sidecar', image: 'side:1' },
        { name: 'web', image: 'web:1' },
      ],
      args: ['a', 'c', 'd'],
    };
    expect(fieldDiff(desired, live).changes.map(formatChange)).toEqual([
      'args[1]: b → c',
      'args[2]: (none) → d',
      'containers[name=web].image: web:2 → web:1',
      'metadata.labels["app.kubernetes.io/name"]: web → api',
    ]);
  });

  it('reads the api states (JSON strings), an absent side as the whole object missing or extra', () => {
    expect(fieldDiffOfStates('{"a":1}', 'null').changes).toEqual([
      { path: '', op: 'missing', desired: { a: 1 } },
    ]);
    expect(fieldDiffOfStates(undefined, '{"a":1}').changes).toEqual([
      { path: '', op: 'extra', live: { a: 1 } },
    ]);
    expect(fieldDiffOfStates('{"a":[1]}', '{"a":{"b":1}}').changes.map(formatChange)).toEqual([
      'a: [1] → {"b":1}',
    ]);
    expect(fieldDiffOfStates('', '').changes).toEqual([]);
  });

  it('stops at a bound on a huge manifest and says so', () => {
    const big = (v: number) =>
      Object.fromEntries(Array.from({ length: MAX_CHANGES + 10 }, (_, i) => [`k${i}`, v]));
    const { changes, truncated } = fieldDiff(big(1), big(2));
    expect(changes).toHaveLength(MAX_CHANGES);
    expect(truncated).toBe(true);
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(fieldDiff(deep, { d: 1 }).changes).toHaveLength(1);
  });
});

describe('pretty', () => {
  it('indents a JSON manifest and leaves an absent one empty', () => {
    expect(pretty('{"kind":"ConfigMap"}')).toBe('{\n  "kind": "ConfigMap"\n}');
    expect(pretty('null')).toBe('');
    expect(pretty(undefined)).toBe('');
  });
});
