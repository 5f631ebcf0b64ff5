// `capstan sync explain --offline` as other tools script it: the built binary, spawned, reading
// real files. The contract is the exit status and the JSON fields.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const repoRoot = join(cliDir, '..');
const bin = join(cliDir, 'bin', 'capstan.js');
let dir: string;

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function capstan(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repoRoot });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function explainJson(...args: string[]) {
  const r = capstan('sync', 'explain', '--offline', ...args, '-o', 'json');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const PROJECT = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: my-project, namespace: argocd }
spec:
  sourceRepos: ['*']
  destinations: [{ server: '*', namespace: '*' }]
  destinationServiceAccounts:
    - { server: https://kubernetes.default.svc, namespace: guestbook-prod, defaultServiceAccount: guestbook-prod-deployer }
    - { server: https://kubernetes.default.svc, namespace: 'guestbook-*', defaultServiceAccount: guestbook-generic-deployer }
    - { server: 'https://*.example.com:6443', namespace: '*', defaultServiceAccount: 'remote-system:deployer' }
`;

const app = (name: string, destination: string) => `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: argocd }
spec:
  project: my-project
  source: { repoURL: 'https://github.com/argoproj/argocd-example-apps.git', targetRevision: HEAD, path: guestbook }
  destination: ${destination}
`;

let project: string;
let apps: string;

beforeAll(() => {
  // Test the code as it is now, not a stale dist.
  execFileSync(process.execPath, [
    join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(cliDir, 'tsconfig.build.json'),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'capstan-explain-'));
  project = file('project.yaml', PROJECT);
  apps = file(
    'apps.yaml',
    [
      app('dev', '{ server: https://kubernetes.default.svc, namespace: guestbook-dev }'),
      app('prod', '{ server: https://kubernetes.default.svc, namespace: guestbook-prod }'),
      app('other', '{ server: https://kubernetes.default.svc, namespace: myns }'),
      app('remote', '{ name: remote, namespace: web }'),
    ].join('---\n'),
  );
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('capstan sync explain --offline -o json', () => {
  it('given guestbook-dev, when explained with impersonation on, then "guestbook-*" is the first match and the contract fields say so', () => {
    const d = explainJson('-f', project, '-f', apps, '--app', 'dev', '--impersonation', 'on');
    expect(d).toMatchObject({
      allowed: true,
      impersonation: true,
      username: 'system:serviceaccount:guestbook-dev:guestbook-generic-deployer',
      serviceAccount: { namespace: 'guestbook-dev', name: 'guestbook-generic-deployer' },
      matchedRule: 1,
      fallback: null,
    });
    expect(d.reason).toEqual(expect.stringContaining('destinationServiceAccounts[1]'));
  });

  it('given guestbook-prod, when explained, then the first of several matching rules wins', () => {
    expect(explainJson('-f', project, '-f', apps, '--app', 'prod', '--impersonation', 'on')).toMatchObject({
      matchedRule: 0,
      username: 'system:serviceaccount:guestbook-prod:guestbook-prod-deployer',
    });
  });

  it('given no matching rule, when explained, then the default ServiceAccount is the fallback; with --strict it is a refusal with exit 0', () => {
    expect(explainJson('-f', project, '-f', apps, '--app', 'other', '--impersonation', 'on')).toMatchObject({
      allowed: true,
      username: 'system:serviceaccount:myns:default',
      serviceAccount: { namespace: 'myns', name: 'default' },
      matchedRule: null,
      fallback: 'default-service-account',
    });
    const strict = explainJson(
      '-f',
      project,
      '-f',
      apps,
      '--app',
      'other',
      '--impersonation',
      'on',
      '--strict',
    );
    expect(strict).toMatchObject({
      allowed: false,
      username: null,
      serviceAccount: null,
      matchedRule: null,
      fallback: null,
    });
    expect(strict.reason).toEqual(expect.stringContaining('strict mode refuses'));
  });

  it('given impersonation off, when explained, then the control-plane identity is used: username null', () => {
    const d = explainJson('-f', project, '-f', apps, '--app', 'dev', '--impersonation', 'off');
    expect(d).toMatchObject({
      allowed: true,
      impersonation: false,
      username: null,
      serviceAccount: null,
      matchedRule: null,
      fallback: null,
    });
    expect(d.warnings).toEqual([expect.stringContaining('ignored because impersonation is off')]);
  });

  it('given a destination by cluster name and --cluster NAME=URL, when explained, then the rules see the URL', () => {
    const d = explainJson(
      '-f',
      project,
      '-f',
      apps,
      '--app',
      'remote',
      '--impersonation',
      'on',
      '--cluster',
      'remote=https://c1.example.com:6443',
    );
    expect(d).toMatchObject({
      allowed: true,
      matchedRule: 2,
      username: 'system:serviceaccount:remote-system:deployer',
    });
    const unknown = explainJson('-f', project, '-f', apps, '--app', 'remote', '--impersonation', 'on');
    expect(unknown).toMatchObject({
      allowed: false,
      reason: 'spec.destination.name: cluster "remote" is not registered',
    });
  });

  it('given a cluster Secret in the files, when explained, then it registers the cluster like --cluster', () => {
    const secret = file(
      'cluster.yaml',
      `apiVersion: v1
kind: Secret
metadata: { name: remote, labels: { argocd.argoproj.io/secret-type: cluster } }
stringData: { name: remote, server: 'https://c2.example.com:6443', config: '{"bearerToken":"do-not-print"}' }
`,
    );
    const r = capstan(
      'sync',
      'explain',
      '--offline',
      '-f',
      dir,
      '--app',
      'remote',
      '--impersonation',
      'on',
      '-o',
      'json',
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      allowed: true,
      destination: { server: 'https://c2.example.com:6443' },
    });
    expect(r.stdout).not.toContain('do-not-print');
    rmSync(secret);
  });

  it('given the repository root, when run as `npx capstan`, then the same contract holds', () => {
    const r = spawnSync(
      'npx',
      [
        'capstan',
        'sync',
        'explain',
        '--offline',
        '-f',
        project,
        '-f',
        apps,
        '--app',
        'dev',
        '--impersonation',
        'on',
        '-o',
        'json',
      ],
      {
        encoding: 'utf8',
        cwd: repoRoot,
      },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ allowed: true, matchedRule: 1 });
  });
});

describe('capstan sync explain: table output and errors', () => {
  it('given the default output, when explained, then a table shows the identity and every rule', () => {
    const r = capstan(
      'sync',
      'explain',
      '--offline',
      '-f',
      project,
      '-f',
      apps,
      '--app',
      'dev',
      '--impersonation',
      'on',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('system:serviceaccount:guestbook-dev:guestbook-generic-deployer');
    expect(r.stdout).toContain('first match');
    expect(r.stdout).toContain('namespace differs');
    expect(r.stdout).toContain('server differs');
  });

  it('given an unreadable file, when run, then it exits non-zero naming the file', () => {
    const r = capstan(
      'sync',
      'explain',
      '--offline',
      '-f',
      join(dir, 'missing.yaml'),
      '--app',
      'dev',
      '-o',
      'json',
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('missing.yaml: ENOENT');
    expect(r.stdout).toBe('');
  });

  it('given an invalid manifest, when run, then it exits 1 with the document and the field path', () => {
    const bad = file(
      'bad.yaml',
      PROJECT.replace("namespace: 'guestbook-*',", "namespace: 'guestbook-*', serviceAccount: oops,"),
    );
    const r = capstan('sync', 'explain', '--offline', '-f', bad, '-f', apps, '--app', 'dev', '-o', 'json');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'document 1 (AppProject my-project): spec.destinationServiceAccounts[1].serviceAccount: unknown field',
    );
  });

  it('given a project whose glob does not compile, when explained, then it is a refusal (exit 0) naming the field', () => {
    const broken = file(
      'broken.yaml',
      PROJECT.replace("namespace: 'guestbook-*'", "namespace: 'guestbook-['"),
    );
    const d = explainJson('-f', broken, '-f', apps, '--app', 'dev', '--impersonation', 'on');
    expect(d.allowed).toBe(false);
    expect(d.reason).toEqual(
      expect.stringContaining('spec.destinationServiceAccounts[1].namespace: invalid glob "guestbook-["'),
    );
  });

  it.each([
    [['--offline', '-f', 'x.yaml'], '--app NAME is required'],
    [['--offline', '--app', 'dev'], 'at least one -f FILE'],
    [['-f', 'x.yaml', '--app', 'dev'], '-f FILE is for --offline'],
    [['--offline', '-f', 'x.yaml', '--app', 'dev', '--cluster', 'nourl'], 'expected NAME=SERVER_URL'],
  ])('given usage %j, when run, then it exits 2 explaining why', (args, message) => {
    const r = capstan('sync', 'explain', ...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('given an invalid choice, when run, then commander refuses it with a non-zero exit', () => {
    const r = capstan(
      'sync',
      'explain',
      '--offline',
      '-f',
      project,
      '--app',
      'dev',
      '--impersonation',
      'maybe',
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("argument 'maybe' is invalid");
  });
});
