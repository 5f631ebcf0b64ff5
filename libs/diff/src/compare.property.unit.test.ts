// Properties: any object compares Synced with itself, and fields the server adds (defaults, not
// owned by capstan) never count as drift, while a changed declared leaf always does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareResource } from './compare.js';
import type { KubeObjectLike } from './types.js';

const FM = { fieldManager: 'capstan' };
const key = fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/);
const scalar = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean());
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), tie('list')),
  map: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  list: fc.array(tie('node'), { maxLength: 3 }),
})).node;
const spec = fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 });
const object = spec.map((s): KubeObjectLike => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 'x', namespace: 'n' },
  spec: s,
}));

/** Adds `extra` under every map of `value` at keys it does not have (what defaulting does). */
function addDefaults(node: unknown, extra: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => addDefaults(item, extra));
  if (node !== null && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = addDefaults(v, extra);
    for (const [k, v] of Object.entries(extra)) if (!(k in out)) out[k] = v;
    return out;
  }
  return node;
}

describe('compareResource properties', () => {
  it('compare(x, x) is Synced', () => {
    fc.assert(
      fc.property(object, (obj) => {
        const result = compareResource(obj, structuredClone(obj), FM);
        expect(result.differences).toEqual([]);
        expect(result.status).toBe('Synced');
      }),
    );
  });

  it('defaulted fields (added by the server, owned by no one) are not drift', () => {
    fc.assert(
      fc.property(
        object,
        fc.dictionary(fc.stringMatching(/^zz[a-z]{1,4}$/), scalar, { minKeys: 1, maxKeys: 3 }),
        (obj, defaults) => {
          const live = {
            ...structuredClone(obj),
            spec: addDefaults(obj.spec, defaults),
            status: { observed: 1 },
          };
          expect(compareResource(obj, live, FM).status).toBe('Synced');
        },
      ),
    );
  });

  it('a changed declared scalar is drift at its path', () => {
    fc.assert(
      fc.property(object, fc.string({ minLength: 1, maxLength: 5 }), (obj, marker) => {
        const desired = { ...obj, spec: { ...(obj.spec as object), probe: `v-${marker}` } };
        const live = {
          ...structuredClone(desired),
          spec: { ...(desired.spec as object), probe: `w-${marker}` },
        };
        expect(compareResource(desired, live, FM).differences).toContain('/spec/probe');
      }),
    );
  });
});
