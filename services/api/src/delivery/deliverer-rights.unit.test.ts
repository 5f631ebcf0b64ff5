// An Application delivering from git, as a caller: Applications of its projects and the source
// repositories its chain permits, nothing else, whatever the policy says.
import { describe, expect, it } from 'vitest';
import { decideForDeliverer, delivererRef, type DelivererGrants } from './deliverer-rights.js';

const grants: DelivererGrants = {
  app: { namespace: 'argocd', name: 'self-service' },
  project: 'platform',
  projects: new Set(['platform', 'team-x']),
  permitsSource: (url) => url.startsWith('https://git.example.com/platform/'),
};

describe('decideForDeliverer', () => {
  it('allows Applications in its projects only', () => {
    expect(decideForDeliverer(grants, 'applications', 'create', 'team-x/web').allowed).toBe(true);
    expect(decideForDeliverer(grants, 'applications', 'delete', 'platform/web').allowed).toBe(true);
    const other = decideForDeliverer(grants, 'applications', 'create', 'team-b/web');
    expect(other).toEqual({
      allowed: false,
      reason: 'Application argocd/self-service (project platform) may not deliver into project team-b',
    });
    expect(decideForDeliverer(grants, 'applications', 'create', '*/web').allowed).toBe(false);
    expect(decideForDeliverer(grants, 'applications', 'override', 'team-x/web').allowed).toBe(false);
  });

  it('reads the source repositories its chain permits, scoped or not', () => {
    const url = 'https://git.example.com/platform/sets.git';
    expect(decideForDeliverer(grants, 'repositories', 'get', url).allowed).toBe(true);
    expect(decideForDeliverer(grants, 'repositories', 'get', `team-x/${url}`).allowed).toBe(true);
    expect(
      decideForDeliverer(grants, 'repositories', 'get', 'https://git.example.com/other.git').allowed,
    ).toBe(false);
    expect(decideForDeliverer(grants, 'repositories', 'create', url).allowed).toBe(false);
  });

  it('is denied everything else', () => {
    for (const [resource, action, object] of [
      ['clusters', 'get', 'https://10.0.0.1'],
      ['projects', 'update', 'platform'],
      ['accounts', 'create', 'alice'],
      ['applicationsets', 'create', 'argocd/x'],
    ] as const)
      expect(decideForDeliverer(grants, resource, action, object).allowed).toBe(false);
  });

  it('reads its name back from a delegation subject, and nothing else', () => {
    expect(delivererRef('application:argocd/self-service')).toEqual({
      namespace: 'argocd',
      name: 'self-service',
    });
    expect(delivererRef('alice')).toBeUndefined();
    expect(delivererRef('application:argocd/a/b')).toBeUndefined();
  });
});
