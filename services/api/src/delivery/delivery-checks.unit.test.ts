// The decisions about control-plane objects an Application delivers from git: the delivering
// project's kind and destination rules, allowedParentProjects, where a delivered Application may
// live, ownership (no take-over), and what a write would do; plus the tracking id they carry.
import { describe, expect, it } from 'vitest';
import { validateApplication } from '../applications/application.validation.js';
import { validateProject } from '../projects/project.validation.js';
import type { Application, AppProject } from '@capstan/policy';
import { decideDelivery, decidePrune, type DeliveredObject, type DeliveryInput } from './delivery-checks.js';
import { trackingId } from '@capstan/policy';
import { deliveredBy, withoutTracking, withTracking } from './tracking.js';

const SERVER = 'https://10.0.0.1:6443';
const ref = { namespace: 'argocd', name: 'self-service' };

const project = (name: string, spec: Record<string, unknown>): AppProject =>
  validateProject({ apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name }, spec });

const application = (name: string, projectName: string, namespace = 'dev-x', extra = {}): Application =>
  validateApplication({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: {
      project: projectName,
      source: { repoURL: 'https://git.example.com/apps.git', path: name },
      destination: { server: SERVER, namespace },
      ...extra,
    },
  });

const stored = new Map<string, AppProject>([
  [
    'platform',
    project('platform', {
      sourceRepos: ['*'],
      destinations: [{ server: SERVER, namespace: 'argocd' }],
      namespaceResourceWhitelist: [
        { group: 'argoproj.io', kind: 'AppProject' },
        { group: 'argoproj.io', kind: 'Application' },
      ],
    }),
  ],
  [
    'dev',
    project('dev', {
      sourceRepos: ['*'],
      destinations: [{ server: SERVER, namespace: 'dev-*' }],
    }),
  ],
  [
    'other-tenant',
    project('other-tenant', { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] }),
  ],
]);

const deliverer = application('self-service', 'platform', 'argocd', { allowedParentProjects: ['dev'] });

const asProject = (p: AppProject): DeliveredObject => ({
  kind: 'AppProject',
  namespace: 'argocd',
  name: p.metadata.name,
  value: p,
});
const asApp = (a: Application): DeliveredObject => ({
  kind: 'Application',
  namespace: 'argocd',
  name: a.metadata.name,
  value: a,
});

const input = (objects: DeliveredObject[], over: Partial<DeliveryInput> = {}): DeliveryInput => ({
  deliverer: { ref, application: deliverer, server: SERVER },
  controlNamespace: 'argocd',
  objects,
  projects: (name) => stored.get(name),
  applications: new Map(),
  applicationViolations: new Map(),
  setOwners: new Map(),
  ...over,
});

const child = (name: string, parent?: string) =>
  project(name, {
    ...(parent ? { parentProject: parent } : {}),
    sourceRepos: ['*'],
    destinations: [{ server: SERVER, namespace: 'dev-x' }],
  });

describe('decideDelivery', () => {
  it('creates a bounded AppProject and an Application of it, as the audit rows name them', () => {
    const verdicts = decideDelivery(
      input([asProject(child('team-x', 'dev')), asApp(application('web', 'team-x'))]),
    );
    expect(verdicts).toEqual([
      {
        kind: 'AppProject',
        namespace: 'argocd',
        name: 'team-x',
        object: 'team-x',
        action: 'create',
        allowed: true,
        reason: 'AppProject team-x created',
      },
      {
        kind: 'Application',
        namespace: 'argocd',
        name: 'web',
        object: 'team-x/web',
        action: 'create',
        allowed: true,
        reason: 'Application web created',
      },
    ]);
  });

  it('refuses a project outside allowedParentProjects, or with none', () => {
    const [outside, none] = decideDelivery(
      input([asProject(child('a', 'other-tenant')), asProject(child('b'))]),
    );
    expect(outside).toMatchObject({ allowed: false, action: 'refused' });
    expect(outside!.reason).toContain(
      'spec.parentProject "other-tenant" is not one of the allowedParentProjects ["dev"]',
    );
    expect(none!.reason).toContain('has no spec.parentProject');
  });

  it('refuses kinds the delivering project does not allow, and namespaces outside its destinations', () => {
    const narrow = new Map(stored);
    narrow.set(
      'platform',
      project('platform', {
        sourceRepos: ['*'],
        destinations: [{ server: SERVER, namespace: 'argocd' }],
        namespaceResourceWhitelist: [{ group: 'argoproj.io', kind: 'AppProject' }],
      }),
    );
    const [app] = decideDelivery(
      input([asApp(application('web', 'platform'))], { projects: (n) => narrow.get(n) }),
    );
    expect(app!.reason).toContain(
      'namespaced resource argoproj.io/Application "web" is not permitted by project "platform"',
    );
    const elsewhere: DeliveredObject = { ...asProject(child('team-x', 'dev')), namespace: 'team-x' };
    expect(decideDelivery(input([elsewhere]))[0]!.reason).toContain('namespace "team-x"');
  });

  it("refuses an Application in another tenant's project, and one that delivers itself", () => {
    const [foreign, itself] = decideDelivery(
      input([
        asApp(application('steal', 'other-tenant')),
        asApp(application('self-service', 'platform', 'argocd')),
      ]),
    );
    expect(foreign!.reason).toBe(
      'Application argocd/steal: project "other-tenant" is not "platform" (the project of Application argocd/self-service), not under it by parentProject, and not delivered by it',
    );
    expect(itself!.reason).toBe('Application argocd/self-service: an Application cannot deliver itself');
  });

  it('never takes over an object it did not deliver, and sees what it delivered as unchanged', () => {
    const byUser = child('team-x', 'dev');
    const byOther = withTracking(child('team-y', 'dev'), 'AppProject', {
      namespace: 'argocd',
      name: 'other',
    });
    const mine = withTracking(child('team-z', 'dev'), 'AppProject', ref);
    const projects = new Map([...stored, ['team-x', byUser], ['team-y', byOther], ['team-z', mine]]);
    const verdicts = decideDelivery(
      input(
        [
          asProject(child('team-x', 'dev')),
          asProject(child('team-y', 'dev')),
          asProject(child('team-z', 'dev')),
        ],
        {
          projects: (n) => projects.get(n),
        },
      ),
    );
    expect(verdicts.map((v) => v.reason)).toEqual([
      'AppProject team-x already exists and was not delivered by Application argocd/self-service: an Application never takes over an object it did not create',
      "AppProject team-y is managed by Application argocd/other (delivered from git): change it in that Application's repository",
      'AppProject team-z unchanged',
    ]);
  });

  it('passes on the project checks of a directly created Application', () => {
    const [v] = decideDelivery(
      input([asProject(child('team-x', 'dev')), asApp(application('web', 'team-x', 'prod'))], {
        applicationViolations: new Map([['argocd/web', ['spec.destination: not permitted']]]),
      }),
    ).slice(1);
    expect(v!.reason).toBe('Application argocd/web: spec.destination: not permitted');
  });
});

describe('decidePrune', () => {
  it('prunes what is no longer delivered, except what says Prune=false', () => {
    const verdicts = decidePrune(
      [
        { kind: 'Application', namespace: 'argocd', name: 'old', object: 'team-x/old' },
        {
          kind: 'AppProject',
          namespace: 'argocd',
          name: 'keep',
          object: 'keep',
          annotations: { 'argocd.argoproj.io/sync-options': 'Prune=false' },
        },
      ],
      'Prune=false',
    );
    expect(verdicts.map((v) => v.action)).toEqual(['prune', 'prune-skipped']);
  });
});

describe('tracking', () => {
  it("writes and reads Argo CD's tracking id, and strips it from what users write", () => {
    const p = withTracking(child('team-x', 'dev'), 'AppProject', ref);
    expect(p.metadata.annotations).toEqual({
      'argocd.argoproj.io/tracking-id': 'self-service:argoproj.io/AppProject:argocd/team-x',
    });
    expect(deliveredBy(p.metadata)).toEqual(ref);
    expect(
      trackingId(
        { namespace: 'tenants', name: 'apps' },
        { group: 'argoproj.io', kind: 'Application', namespace: 'argocd', name: 'web' },
      ),
    ).toBe('tenants_apps:argoproj.io/Application:argocd/web');
    expect(
      deliveredBy({
        name: 'x',
        annotations: { 'argocd.argoproj.io/tracking-id': 'tenants_apps:argoproj.io/Application:argocd/web' },
      }),
    ).toEqual({
      namespace: 'tenants',
      name: 'apps',
    });
    expect(withoutTracking(p).metadata.annotations).toBeUndefined();
  });
});
