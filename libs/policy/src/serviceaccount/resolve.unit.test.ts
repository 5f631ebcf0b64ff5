// ServiceAccount resolution: every example and special case of proposal 000
// ("Decouple Application Sync using Impersonation"), the rules of docs/architecture.md ("The rules at the heart"), and the chain
// rule of docs/decisions.md ("ServiceAccount resolution and the project chain").
import { describe, expect, it } from 'vitest';
import { chainOf, IN_CLUSTER_URL, project } from '../test-support/fixtures.js';
import { resolveServiceAccount, type ServiceAccountResolution } from './resolve.js';

const lenient = { strict: false };
const strict = { strict: true };

function ok(res: ServiceAccountResolution) {
  if (!res.ok) throw new Error(`expected a resolution, got refusal: ${res.reason}`);
  return res;
}
function refused(res: ServiceAccountResolution) {
  if (res.ok) throw new Error(`expected a refusal, got ${res.username}`);
  return res;
}

describe('proposal 000, example 1: one service account for all namespaces', () => {
  const p = project('my-project', {
    sourceRepos: ['*'],
    destinations: [{ namespace: '*', server: IN_CLUSTER_URL }],
    destinationServiceAccounts: [
      { namespace: '*', server: IN_CLUSTER_URL, defaultServiceAccount: 'generic-deployer' },
    ],
  });

  it('given namespace guestbook, when resolving, then generic-deployer in guestbook is used because guestbook matches "*"', () => {
    const res = ok(
      resolveServiceAccount(
        chainOf('my-project', p),
        { server: IN_CLUSTER_URL, namespace: 'guestbook', applicationNamespace: 'argocd' },
        lenient,
      ),
    );
    expect(res.username).toBe('system:serviceaccount:guestbook:generic-deployer');
    expect(res.serviceAccount).toEqual({ namespace: 'guestbook', name: 'generic-deployer' });
    expect(res.matchedRule).toBe(0);
    expect(res.fallback).toBeNull();
  });
});

describe('proposal 000, examples 2-4: a service account per namespace', () => {
  const p = project('my-project', {
    sourceRepos: ['*'],
    destinations: [
      { namespace: 'guestbook', server: IN_CLUSTER_URL },
      { namespace: 'guestbook-ui', server: IN_CLUSTER_URL },
    ],
    destinationServiceAccounts: [
      { namespace: 'guestbook', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook-deployer' },
      { namespace: 'guestbook-ui', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook-ui-deployer' },
    ],
  });
  const chain = chainOf('my-project', p);

  it('given namespace guestbook, when resolving, then guestbook-deployer (rule 0) is used', () => {
    const res = ok(
      resolveServiceAccount(
        chain,
        { server: IN_CLUSTER_URL, namespace: 'guestbook', applicationNamespace: 'argocd' },
        lenient,
      ),
    );
    expect(res.username).toBe('system:serviceaccount:guestbook:guestbook-deployer');
    expect(res.matchedRule).toBe(0);
  });

  it('given namespace guestbook-ui, when resolving, then guestbook-ui-deployer (rule 1) is used', () => {
    const res = ok(
      resolveServiceAccount(
        chain,
        { server: IN_CLUSTER_URL, namespace: 'guestbook-ui', applicationNamespace: 'argocd' },
        lenient,
      ),
    );
    expect(res.username).toBe('system:serviceaccount:guestbook-ui:guestbook-ui-deployer');
    expect(res.matchedRule).toBe(1);
  });

  it('given another cluster, when resolving, then no rule matches and the default ServiceAccount is used (the proposal) or refused (strict)', () => {
    const req = {
      server: 'https://remote.example.com:6443',
      namespace: 'guestbook',
      applicationNamespace: 'argocd',
    };
    const res = ok(resolveServiceAccount(chain, req, lenient));
    expect(res.username).toBe('system:serviceaccount:guestbook:default');
    expect(res.fallback).toBe('default-service-account');
    expect(res.matchedRule).toBeNull();
    const r = refused(resolveServiceAccount(chain, req, strict));
    expect(r.code).toBe('no-match-strict');
    expect(r.reason).toMatch(/strict mode/);
  });
});

describe('proposal 000, the catch-all: server "*" matches a full https URL', () => {
  const p = project('my-project', {
    destinationServiceAccounts: [
      { server: IN_CLUSTER_URL, namespace: 'guestbook', defaultServiceAccount: 'guestbook-deployer' },
      { server: IN_CLUSTER_URL, namespace: 'guestbook-dev', defaultServiceAccount: 'guestbook-dev-deployer' },
      {
        server: IN_CLUSTER_URL,
        namespace: 'guestbook-stage',
        defaultServiceAccount: 'guestbook-stage-deployer',
      },
      { server: '*', namespace: '*', defaultServiceAccount: 'default' },
    ],
  });

  it('given a remote cluster URL with port and path, when resolving, then the catch-all (rule 3) matches', () => {
    const res = ok(
      resolveServiceAccount(
        chainOf('my-project', p),
        {
          server: 'https://10.1.2.3:6443/k8s/clusters/c-1',
          namespace: 'other',
          applicationNamespace: 'argocd',
        },
        strict,
      ),
    );
    expect(res.matchedRule).toBe(3);
    expect(res.username).toBe('system:serviceaccount:other:default');
    expect(res.fallback).toBeNull();
  });

  it('given guestbook-dev, when resolving, then the specific rule before the catch-all wins', () => {
    const res = ok(
      resolveServiceAccount(
        chainOf('my-project', p),
        { server: IN_CLUSTER_URL, namespace: 'guestbook-dev', applicationNamespace: 'argocd' },
        strict,
      ),
    );
    expect(res.matchedRule).toBe(1);
    expect(res.username).toBe('system:serviceaccount:guestbook-dev:guestbook-dev-deployer');
  });
});

describe('proposal 000, special case: multiple matches, the first valid match wins', () => {
  const p = project('my-project', {
    destinationServiceAccounts: [
      {
        server: IN_CLUSTER_URL,
        namespace: 'guestbook-prod',
        defaultServiceAccount: 'guestbook-prod-deployer',
      },
      {
        server: IN_CLUSTER_URL,
        namespace: 'guestbook-*',
        defaultServiceAccount: 'guestbook-generic-deployer',
      },
      { server: IN_CLUSTER_URL, namespace: '*', defaultServiceAccount: 'generic-deployer' },
    ],
  });
  const chain = chainOf('my-project', p);
  const resolve = (namespace: string) =>
    ok(
      resolveServiceAccount(
        chain,
        { server: IN_CLUSTER_URL, namespace, applicationNamespace: 'argocd' },
        strict,
      ),
    );

  it('given myns, when resolving, then only "*" matches: generic-deployer', () => {
    expect(resolve('myns')).toMatchObject({
      matchedRule: 2,
      username: 'system:serviceaccount:myns:generic-deployer',
      matchedPattern: { namespace: '*' },
    });
  });
  it.each(['guestbook-dev', 'guestbook-stage'])(
    'given %s, when resolving, then "guestbook-*" comes before "*": guestbook-generic-deployer',
    (ns) => {
      expect(resolve(ns)).toMatchObject({
        matchedRule: 1,
        username: `system:serviceaccount:${ns}:guestbook-generic-deployer`,
        matchedPattern: { namespace: 'guestbook-*' },
      });
    },
  );
  it('given guestbook-prod, when resolving, then all three match and the first wins: guestbook-prod-deployer', () => {
    expect(resolve('guestbook-prod')).toMatchObject({
      matchedRule: 0,
      username: 'system:serviceaccount:guestbook-prod:guestbook-prod-deployer',
    });
  });
  it('given guestbook (no dash), when resolving, then "guestbook-*" does not match it: generic-deployer', () => {
    expect(resolve('guestbook')).toMatchObject({ matchedRule: 2 });
  });
});

describe('proposal 000, special case: a service account in another namespace ("namespace:name")', () => {
  const p = project('my-project', {
    destinationServiceAccounts: [
      { server: IN_CLUSTER_URL, namespace: '*', defaultServiceAccount: 'mynamespace:guestbook-deployer' },
    ],
  });
  it('given any namespace, when resolving, then the named namespace is used, not the destination', () => {
    const res = ok(
      resolveServiceAccount(
        chainOf('my-project', p),
        { server: IN_CLUSTER_URL, namespace: 'guestbook', applicationNamespace: 'argocd' },
        strict,
      ),
    );
    expect(res.serviceAccount).toEqual({ namespace: 'mynamespace', name: 'guestbook-deployer' });
    expect(res.username).toBe('system:serviceaccount:mynamespace:guestbook-deployer');
  });
});

describe('proposal 000, special case: the Application has no destination namespace', () => {
  // The proposal's YAML: rules for namespaces guestbook and guestbook-ui, Application in argocd
  // without spec.destination.namespace. Namespace globs are matched against the destination
  // namespace as written (''), as Argo CD does, so neither rule matches; the ServiceAccount is
  // then looked up in the Application's own namespace, argocd.
  const proposalProject = project('my-project', {
    destinationServiceAccounts: [
      { namespace: 'guestbook', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook-deployer' },
      { namespace: 'guestbook-ui', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook-ui-deployer' },
    ],
  });
  const req = { server: IN_CLUSTER_URL, namespace: '', applicationNamespace: 'argocd' };

  it('given the proposal YAML, when resolving, then no rule matches "" and default in argocd is used (strict: refused)', () => {
    const res = ok(resolveServiceAccount(chainOf('my-project', proposalProject), req, lenient));
    expect(res.username).toBe('system:serviceaccount:argocd:default');
    expect(res.fallback).toBe('default-service-account');
    expect(refused(resolveServiceAccount(chainOf('my-project', proposalProject), req, strict)).code).toBe(
      'no-match-strict',
    );
  });

  it('given a rule matching every namespace, when resolving, then the bare name lives in the Application namespace argocd', () => {
    const p = project('my-project', {
      destinationServiceAccounts: [
        { namespace: '*', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook-deployer' },
      ],
    });
    expect(ok(resolveServiceAccount(chainOf('my-project', p), req, strict)).username).toBe(
      'system:serviceaccount:argocd:guestbook-deployer',
    );
  });

  it('given "guestbook:guestbook-deployer", when resolving, then the named namespace guestbook is used', () => {
    const p = project('my-project', {
      destinationServiceAccounts: [
        { namespace: '*', server: IN_CLUSTER_URL, defaultServiceAccount: 'guestbook:guestbook-deployer' },
      ],
    });
    expect(ok(resolveServiceAccount(chainOf('my-project', p), req, strict)).username).toBe(
      'system:serviceaccount:guestbook:guestbook-deployer',
    );
  });

  it('given a rule with the empty namespace pattern, when resolving, then it matches only Applications without a namespace', () => {
    const p = project('my-project', {
      destinationServiceAccounts: [
        { namespace: '', server: '*', defaultServiceAccount: 'no-namespace-deployer' },
        { namespace: '*', server: '*', defaultServiceAccount: 'any-deployer' },
      ],
    });
    const chain = chainOf('my-project', p);
    expect(ok(resolveServiceAccount(chain, req, strict)).matchedRule).toBe(0);
    expect(ok(resolveServiceAccount(chain, { ...req, namespace: 'team-a' }, strict)).matchedRule).toBe(1);
  });

  it('given neither a destination nor an Application namespace, when resolving a bare name, then it fails closed', () => {
    const p = project('my-project', {
      destinationServiceAccounts: [{ namespace: '*', server: '*', defaultServiceAccount: 'deployer' }],
    });
    const r = refused(
      resolveServiceAccount(
        chainOf('my-project', p),
        { server: IN_CLUSTER_URL, namespace: '', applicationNamespace: '' },
        lenient,
      ),
    );
    expect(r.code).toBe('no-namespace');
    expect(
      refused(
        resolveServiceAccount(
          chainOf('empty', project('empty')),
          { server: IN_CLUSTER_URL, namespace: '', applicationNamespace: '' },
          lenient,
        ),
      ).code,
    ).toBe('no-namespace');
  });
});

describe('names are validated as Kubernetes validates them', () => {
  it('given a destination namespace that is not a DNS label, when a bare name would live there, then the sync is refused with the reason', () => {
    const p = project('p', {
      destinationServiceAccounts: [{ namespace: '*', server: '*', defaultServiceAccount: 'deployer' }],
    });
    const r = refused(
      resolveServiceAccount(
        chainOf('p', p),
        { server: IN_CLUSTER_URL, namespace: 'Team_A', applicationNamespace: 'argocd' },
        lenient,
      ),
    );
    expect(r.code).toBe('invalid-service-account');
    expect(r.reason).toMatch(/namespace "Team_A" must be a DNS label/);
    expect(r.matchedRule).toBe(0);
  });

  it('given no match and an invalid destination namespace, when falling back, then the default ServiceAccount is refused too', () => {
    const r = refused(
      resolveServiceAccount(
        chainOf('p', project('p')),
        { server: IN_CLUSTER_URL, namespace: 'UPPER', applicationNamespace: 'argocd' },
        lenient,
      ),
    );
    expect(r.code).toBe('invalid-service-account');
  });
});

describe('the parentProject chain can never change the identity its parents would use', () => {
  const tenants = project('tenants', {
    destinationServiceAccounts: [
      { server: '*', namespace: 'team-a-prod', defaultServiceAccount: 'prod-deployer' },
      { server: '*', namespace: 'team-a-*', defaultServiceAccount: 'team-a-system:deployer' },
    ],
  });
  const req = (namespace: string) => ({ server: IN_CLUSTER_URL, namespace, applicationNamespace: 'argocd' });

  it('given a child without rules, when resolving, then it uses what its parent resolves (the parent rule is reported)', () => {
    const child = project('team-a', { parentProject: 'tenants' });
    const res = ok(resolveServiceAccount(chainOf('team-a', child, tenants), req('team-a-prod'), strict));
    expect(res).toMatchObject({
      username: 'system:serviceaccount:team-a-prod:prod-deployer',
      matchedProject: 'tenants',
      matchedRule: 0,
    });
  });

  it('given a child whose rule resolves the same account, when resolving, then it is allowed and the child rule is reported', () => {
    const child = project('team-a', {
      parentProject: 'tenants',
      destinationServiceAccounts: [
        { server: '*', namespace: '*', defaultServiceAccount: 'team-a-system:deployer' },
      ],
    });
    const res = ok(resolveServiceAccount(chainOf('team-a', child, tenants), req('team-a-dev'), strict));
    expect(res).toMatchObject({
      username: 'system:serviceaccount:team-a-system:deployer',
      matchedProject: 'team-a',
      matchedRule: 0,
    });
  });

  it('given a child that picks a more powerful account, when resolving, then it is refused and both rules are named', () => {
    const child = project('team-a', {
      parentProject: 'tenants',
      destinationServiceAccounts: [
        { server: '*', namespace: '*', defaultServiceAccount: 'kube-system:admin' },
      ],
    });
    const r = refused(resolveServiceAccount(chainOf('team-a', child, tenants), req('team-a-prod'), lenient));
    expect(r.code).toBe('parent-disagrees');
    expect(r.reason).toContain('kube-system:admin');
    expect(r.reason).toContain('team-a-prod:prod-deployer');
    expect(r.reason).toContain('"tenants" destinationServiceAccounts[0]');
  });

  it('given a parent without rules, when a child names an account, then only the fallback account is acceptable', () => {
    const root = project('root');
    const picky = project('team-a', {
      parentProject: 'root',
      destinationServiceAccounts: [
        { server: '*', namespace: '*', defaultServiceAccount: 'kube-system:admin' },
      ],
    });
    expect(refused(resolveServiceAccount(chainOf('team-a', picky, root), req('team-a'), lenient)).code).toBe(
      'parent-disagrees',
    );
    expect(
      refused(resolveServiceAccount(chainOf('team-a', picky, root), req('team-a'), strict)).reason,
    ).toMatch(/strict mode refuses/);
    const modest = project('team-a', {
      parentProject: 'root',
      destinationServiceAccounts: [{ server: '*', namespace: '*', defaultServiceAccount: 'default' }],
    });
    expect(ok(resolveServiceAccount(chainOf('team-a', modest, root), req('team-a'), lenient)).username).toBe(
      'system:serviceaccount:team-a:default',
    );
  });

  it('given a three-level chain, when the middle has no rule for the destination, then the root decides and the child must agree', () => {
    const root = project('root', {
      destinationServiceAccounts: [{ server: '*', namespace: '*', defaultServiceAccount: 'deployer' }],
    });
    const mid = project('mid', {
      parentProject: 'root',
      destinationServiceAccounts: [
        { server: '*', namespace: 'other', defaultServiceAccount: 'other-deployer' },
      ],
    });
    const agree = project('leaf', {
      parentProject: 'mid',
      destinationServiceAccounts: [{ server: '*', namespace: 'team-*', defaultServiceAccount: 'deployer' }],
    });
    const res = ok(resolveServiceAccount(chainOf('leaf', agree, mid, root), req('team-x'), strict));
    expect(res).toMatchObject({ username: 'system:serviceaccount:team-x:deployer', matchedProject: 'leaf' });
    const differ = project('leaf', {
      parentProject: 'mid',
      destinationServiceAccounts: [{ server: '*', namespace: 'other', defaultServiceAccount: 'x' }],
    });
    expect(
      refused(resolveServiceAccount(chainOf('leaf', differ, mid, root), req('other'), strict)).reason,
    ).toContain('"mid"');
  });
});
