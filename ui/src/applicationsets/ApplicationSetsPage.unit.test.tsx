import { describe, expect, it } from 'vitest';
import { editable } from './ApplicationSetsPage';

describe('ApplicationSet preview input', () => {
  it('keeps the name, namespace and spec of the stored set, not its status', () => {
    const stored = {
      metadata: { name: 'addons', namespace: 'argocd', uid: 'x', resourceVersion: '3' },
      spec: { generators: [{ list: { elements: [] } }] },
      status: { conditions: [] },
    };
    expect(editable(stored)).toEqual({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'addons', namespace: 'argocd' },
      spec: { generators: [{ list: { elements: [] } }] },
    });
  });
});
