import { describe, expect, it } from 'vitest';
import { includeResource, parseResourceFlags, selectedResources } from './app-sync-resources.js';

const resources = [
  { group: '', kind: 'ConfigMap', name: 'config', namespace: 'team-a' },
  { group: 'apps', kind: 'Deployment', name: 'web', namespace: 'team-a' },
  { group: '', kind: 'Service', name: 'web', namespace: 'team-a' },
];

describe("app sync --resource (Argo CD's GROUP:KIND:NAME)", () => {
  it('parses GROUP:KIND:NAME, GROUP:KIND:NAMESPACE/NAME and ! for exclusion', () => {
    expect(parseResourceFlags([':ConfigMap:config', 'apps:Deployment:team-a/web', '!:Service:*'])).toEqual([
      { group: '', kind: 'ConfigMap', name: 'config', namespace: '', exclude: false },
      { group: 'apps', kind: 'Deployment', name: 'web', namespace: 'team-a', exclude: false },
      { group: '', kind: 'Service', name: '*', namespace: '', exclude: true },
    ]);
  });

  it("refuses a malformed value with Argo CD's message", () => {
    expect(() => parseResourceFlags(['ConfigMap:config'])).toThrow(
      'resource should have GROUP:KIND:NAME, but instead got: ConfigMap:config',
    );
    expect(() => parseResourceFlags([':ConfigMap:a/b/c'])).toThrow(
      'resource with namespace should have GROUP:KIND:NAMESPACE/NAME, but instead got: :ConfigMap:a/b/c',
    );
  });

  it("matches against the Application's resources: wildcards, exclusions, exact list sent", () => {
    expect(selectedResources([':ConfigMap:config'], resources)).toEqual([resources[0]]);
    expect(selectedResources(['*:*:web'], resources)).toEqual([resources[1], resources[2]]);
    expect(selectedResources(['!apps:Deployment:web'], resources)).toEqual([resources[0], resources[2]]);
    expect(selectedResources([], resources)).toEqual([]);
    expect(() => selectedResources([':Secret:x'], resources)).toThrow(
      'No matching app resources found for resource filter: :Secret:x',
    );
    expect(includeResource(resources[1]!, parseResourceFlags(['apps:Deployment:other/web']))).toBe(false);
  });
});
