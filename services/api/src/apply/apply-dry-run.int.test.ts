// apply --dry-run gives the verdict the apply gives (real PostgreSQL and NATS): the same refusals
// (a change only role:admin may make, a cluster name held by another server, a missing project) with
// the same codes and messages, a project and an Application in it both "would-create" in one
// request, and nothing written by a dry run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient, TENANT_POLICY } from '../test-support/fixtures.js';

const project = (name: string, sa = 'deployer') => `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: ${name}, namespace: argocd }
spec:
  sourceRepos: ['https://git.example.com/*']
  destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }]
  destinationServiceAccounts:
    - { server: '*', namespace: '*', defaultServiceAccount: '${sa}' }
`;
const app = (name: string, proj: string) => `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: argocd }
spec:
  project: ${proj}
  source: { repoURL: 'https://git.example.com/a.git', path: web }
  destination: { server: 'https://kubernetes.default.svc', namespace: web }
`;
const cluster = (name: string, server: string) => `
apiVersion: v1
kind: Secret
metadata: { name: c-${name}, namespace: argocd, labels: { argocd.argoproj.io/secret-type: cluster } }
stringData: { name: ${name}, server: '${server}', config: '{"bearerToken":"t"}' }
`;

describe('apply dry run: the same verdict as the apply', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let editor: string;

  const apply = (token: string, manifests: string, dryRun: boolean) =>
    unary(c.apply.apply.bind(c.apply), { manifests, dryRun, strict: false }, { metadata: bearer(token) });
  const events = async () =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from api.events`.execute(h.api.services.db)).rows[0]!.n,
    );
  /** The dry run and the apply refuse alike (code and message), and the dry run wrote nothing. */
  const sameRefusal = async (token: string, manifests: string, code: status) => {
    const before = await events();
    const dry = await grpcError(apply(token, manifests, true));
    expect(await events()).toBe(before);
    const real = await grpcError(apply(token, manifests, false));
    expect({ code: dry.code, details: dry.details }).toEqual({ code: real.code, details: real.details });
    expect(dry.code).toBe(code);
    return dry;
  };

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': TENANT_POLICY });
    c = h.clients();
    admin = await h.login('admin', ADMIN_PASSWORD);
    const http = httpClient(h);
    await http('POST', '/api/v1/account', admin, { name: 'editor', password: 'editor-password' });
    editor = await h.login('editor', 'editor-password');
    await apply(admin, project('team-x') + '---' + cluster('prod', 'https://prod.example.com'), false);
  });
  afterAll(async () => h?.stop());

  it('plans a new project and an Application in it as would-create, writing nothing', async () => {
    const before = await events();
    const r = await apply(admin, project('team-new') + '---' + app('web', 'team-new'), true);
    expect(r.results.map((x) => `${x.kind}/${x.name}:${x.action}`)).toEqual([
      'AppProject/team-new:would-create',
      'Application/web:would-create',
    ]);
    expect(await events()).toBe(before);
    const unchanged = await apply(admin, project('team-x'), true);
    expect(unchanged.results.map((x) => x.action)).toEqual(['unchanged']);
  });

  it('refuses in a dry run what only role:admin may change, as the apply does', async () => {
    const err = await sameRefusal(editor, project('team-x', 'root-sa'), status.PERMISSION_DENIED);
    expect(err.details).toMatch(/only admins may (create|change) project team-x/);
  });

  it('refuses in a dry run a cluster name held by another server, as the apply does', async () => {
    const err = await sameRefusal(
      admin,
      cluster('prod', 'https://other.example.com'),
      status.INVALID_ARGUMENT,
    );
    expect(err.details).toMatch(/cluster name prod is already used by https:\/\/prod\.example\.com/);
  });

  it('refuses in a dry run an Application whose project does not exist, as the apply does', async () => {
    await sameRefusal(admin, app('orphan', 'no-such-project'), status.INVALID_ARGUMENT);
  });
});
