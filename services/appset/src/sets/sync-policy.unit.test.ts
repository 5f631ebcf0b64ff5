// applicationsSync mapped onto the api's Apply flags as Argo CD's AllowUpdate/AllowDelete define them.
import { describe, expect, it } from 'vitest';
import { applyPolicy, deletePolicy } from './sync-policy.js';

const spec = (syncPolicy?: Record<string, unknown>) => ({ spec: { syncPolicy } }) as never;

describe('applicationsSync', () => {
  it.each([
    ['create-only', false, false],
    ['create-update', true, false],
    ['create-delete', false, true],
    ['sync', true, true],
  ])('%s: update %s, delete %s', (policy, allowUpdate, deleteMissing) => {
    expect(applyPolicy(spec({ applicationsSync: policy }))).toEqual({
      allowUpdate,
      deleteMissing,
      preserveResources: false,
    });
    expect(deletePolicy(spec({ applicationsSync: policy })).deleteApplications).toBe(deleteMissing);
  });

  it('defaults to sync without a policy', () => {
    expect(applyPolicy(spec())).toEqual({ allowUpdate: true, deleteMissing: true, preserveResources: false });
  });

  it('passes preserveResourcesOnDeletion on, for deletes of the set and of Applications it no longer generates', () => {
    expect(applyPolicy(spec({ preserveResourcesOnDeletion: true })).preserveResources).toBe(true);
    expect(deletePolicy(spec({ preserveResourcesOnDeletion: true }))).toEqual({
      deleteApplications: true,
      preserveResources: true,
    });
  });
});
