// What `appset create` and `appset apply` report for each set, decided as argocd decides it from the
// set read before the write and the set the server returned.
import type { apiv1 } from '@capstan/proto';
import { describe, expect, it } from 'vitest';
import { writeAction } from './appset-write.js';
import { guestbookSet } from './test-support/appset-fixtures.js';

/** The same value with every object's keys in reverse order. */
const reversed = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reversed)
    : typeof v === 'object' && v !== null
      ? Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, reversed(x)]),
        )
      : v;

const withSpec = (s: apiv1.ApplicationSet, spec: Record<string, unknown>) => ({ ...s, spec });

describe('writeAction', () => {
  it('is created when no set existed', () => {
    expect(writeAction(undefined, guestbookSet, false)).toBe('created');
    expect(writeAction(undefined, guestbookSet, true)).toBe('created');
  });

  it('is unchanged when spec, labels and annotations are equal whatever their key order', () => {
    const reordered = reversed(guestbookSet.spec) as Record<string, unknown>;
    expect(Object.keys(reordered)).not.toEqual(Object.keys(guestbookSet.spec!));
    const after = { ...withSpec(guestbookSet, reordered), status: { conditions: [] } };
    expect(writeAction(guestbookSet, after, true)).toBe('unchanged');
  });

  it('is updated when the spec or a label changed with upsert, and unchanged without upsert (argocd)', () => {
    const changed = withSpec(guestbookSet, { ...guestbookSet.spec, goTemplate: true });
    expect(writeAction(guestbookSet, changed, true)).toBe('updated');
    const relabelled = { ...guestbookSet, metadata: { ...guestbookSet.metadata!, labels: { team: 'b' } } };
    expect(writeAction(guestbookSet, relabelled, true)).toBe('updated');
    expect(writeAction(guestbookSet, changed, false)).toBe('unchanged');
  });
});
