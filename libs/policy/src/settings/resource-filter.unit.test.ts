// Argo CD's resource.exclusions / resource.inclusions semantics (util/settings/resources_filter_test.go).
import { describe, expect, it } from 'vitest';
import { readArgoValue } from './argo-settings.js';
import { excludedResourceMessage, isExcludedResource, readFilteredResources } from './resource-filter.js';

const none = { exclusions: [], inclusions: [] };
const server = 'https://kubernetes.default.svc';

describe('isExcludedResource', () => {
  it("always excludes Argo's core resources (Events, events.k8s.io, metrics.k8s.io)", () => {
    expect(isExcludedResource(none, '', 'Event', server)).toBe(true);
    expect(isExcludedResource(none, 'events.k8s.io', 'Event', server)).toBe(true);
    expect(isExcludedResource(none, 'metrics.k8s.io', 'PodMetrics', server)).toBe(true);
    expect(isExcludedResource(none, '', 'ConfigMap', server)).toBe(false);
    expect(isExcludedResource(none, 'apps', 'Deployment', server)).toBe(false);
  });

  it('matches group, kind and cluster by globs; an empty or missing list matches everything', () => {
    const filter = {
      exclusions: [
        { apiGroups: ['*.cilium.io', 'cilium.io'], kinds: ['Cilium*'] },
        { kinds: ['Secret'], clusters: ['https://prod-*'] },
      ],
      inclusions: [],
    };
    expect(isExcludedResource(filter, 'cilium.io', 'CiliumIdentity', server)).toBe(true);
    expect(isExcludedResource(filter, 'x.cilium.io', 'CiliumEndpoint', server)).toBe(true);
    expect(isExcludedResource(filter, 'cilium.io', 'NetworkPolicy', server)).toBe(false);
    expect(isExcludedResource(filter, '', 'Secret', 'https://prod-eu.example')).toBe(true);
    expect(isExcludedResource(filter, '', 'Secret', server)).toBe(false);
  });

  it('with inclusions, excludes what no inclusion matches; exclusions still win', () => {
    const filter = {
      exclusions: [{ kinds: ['Secret'] }],
      inclusions: [{ apiGroups: ['', 'apps'] }],
    };
    expect(isExcludedResource(filter, 'apps', 'Deployment', server)).toBe(false);
    expect(isExcludedResource(filter, '', 'ConfigMap', server)).toBe(false);
    expect(isExcludedResource(filter, 'batch', 'Job', server)).toBe(true);
    expect(isExcludedResource(filter, '', 'Secret', server)).toBe(true);
  });

  it("words the warning as Argo CD's ExcludedResourceWarning", () => {
    expect(excludedResourceMessage('apps', 'Deployment', 'guestbook-ui')).toBe(
      'Resource apps/Deployment guestbook-ui is excluded in the settings',
    );
  });
});

describe('reading resource.exclusions', () => {
  it("reads Argo's YAML list", () => {
    const read = readArgoValue(
      'resource-filter',
      '- apiGroups:\n  - cilium.io\n  kinds:\n  - CiliumIdentity\n  clusters:\n  - "*"\n',
    );
    expect(read).toEqual({
      value: [{ apiGroups: ['cilium.io'], kinds: ['CiliumIdentity'], clusters: ['*'] }],
    });
    expect(readArgoValue('resource-filter', '')).toEqual({ value: [] });
  });

  it('names the entry and field of a mistake', () => {
    expect(readFilteredResources({ kinds: ['x'] })).toEqual({
      problem: 'must be a list of {apiGroups, kinds, clusters}',
    });
    expect(readFilteredResources([{ kind: ['Secret'] }])).toEqual({
      problem: '[0]: unknown field "kind" (expected apiGroups, kinds, clusters)',
    });
    expect(readFilteredResources([{}, { apiGroups: 'apps' }])).toEqual({
      problem: '[1].apiGroups: must be a list of strings',
    });
    expect('problem' in readFilteredResources([{ kinds: ['{a,b'] }])).toBe(true);
    expect(readArgoValue('resource-filter', '- [unclosed')).toMatchObject({
      problem: expect.stringContaining('not valid YAML'),
    });
  });
});
