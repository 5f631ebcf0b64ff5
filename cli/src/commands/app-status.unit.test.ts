// `capstan app get` and `capstan app history` from fixed Applications, compared with what
// `argocd app get` / `argocd app history` print for the same status (cmd/argocd/commands/app.go):
// the Sync Status line, the resource table merging live status with the last operation, the history
// table, and the choice of the deployment `app rollback` goes back to.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { apiv1 } from '@capstan/proto';
import {
  printApplication,
  printOperations,
  printRevisionHistory,
  resourceStates,
  rollbackTarget,
  syncStatusLine,
} from './app-status.js';

let out = '';
beforeEach(() => {
  out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

const cells = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

const SHA = 'abc1234def5678901234567890abcdef12345678';
const source = {
  repoURL: 'https://git.example.com/team-a/apps.git',
  path: 'guestbook',
  targetRevision: 'HEAD',
};

const app = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  apiv1.Application.fromJSON({
    metadata: { name: 'guestbook', namespace: 'argocd' },
    spec: {
      project: 'team-a',
      source,
      destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-prod' },
      ...spec,
    },
    status,
  });

const guestbook = app({
  sync: { status: 'OutOfSync', revision: SHA },
  health: { status: 'Progressing', message: 'Waiting for rollout to finish' },
  resources: [
    {
      group: '',
      version: 'v1',
      kind: 'Service',
      namespace: 'team-a-prod',
      name: 'guestbook-ui',
      status: 'Synced',
      health: { status: 'Healthy' },
    },
    {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'team-a-prod',
      name: 'guestbook-ui',
      status: 'OutOfSync',
      health: { status: 'Progressing' },
    },
    {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      namespace: 'team-a-prod',
      name: 'old',
      status: 'OutOfSync',
      requiresPruning: true,
    },
  ],
  operationState: {
    id: 'op-1',
    phase: 'Succeeded',
    message: '2 resources synced, 0 pruned',
    operation: { sync: { revision: SHA }, initiatedBy: { username: 'alice' } },
    syncResult: {
      revision: SHA,
      resources: [
        {
          group: 'apps',
          kind: 'Deployment',
          namespace: 'team-a-prod',
          name: 'guestbook-ui',
          verb: 'apply',
          status: 'Synced',
          message: 'deployment.apps/guestbook-ui configured',
        },
        {
          group: '',
          kind: 'Service',
          namespace: 'team-a-prod',
          name: 'guestbook-ui',
          verb: 'apply',
          status: 'Synced',
          message: 'service/guestbook-ui unchanged',
        },
      ],
    },
    identity: 'system:serviceaccount:team-a-prod:deployer',
  },
  conditions: [
    {
      type: 'SharedResourceWarning',
      message: 'ConfigMap/old is part of applications guestbook and other',
      lastTransitionTime: '2026-11-25T10:00:00Z',
    },
  ],
});

describe('app get', () => {
  it("says Synced to / OutOfSync from the target with the compared commit, as Argo's Sync Status line", () => {
    expect(syncStatusLine(guestbook)).toBe('OutOfSync from HEAD (abc1234)');
    expect(syncStatusLine(app({ sync: { status: 'Synced', revision: SHA } }))).toBe(
      'Synced to HEAD (abc1234)',
    );
    // A target that is a commit already is not repeated; never reconciled is Unknown.
    expect(
      syncStatusLine(
        app({ sync: { status: 'Synced', revision: SHA } }, { source: { ...source, targetRevision: SHA } }),
      ),
    ).toBe(`Synced to ${SHA}`);
    expect(syncStatusLine(app({}))).toBe('Unknown');
  });

  it("lists the last operation's resources first with their live status and message, then the other live resources", () => {
    expect(resourceStates(guestbook).map((r) => [r.kind, r.status, r.health, r.message])).toEqual([
      ['Deployment', 'OutOfSync', 'Progressing', 'deployment.apps/guestbook-ui configured'],
      ['Service', 'Synced', 'Healthy', 'service/guestbook-ui unchanged'],
      ['ConfigMap', 'OutOfSync', '', ''],
    ]);
  });

  it("prints the summary, the conditions and the resource table with argocd app get's columns", () => {
    printApplication('table', guestbook, 'Sync Allowed');
    const [summary, conditions, resources] = out.split('\n\n');
    expect(summary).toMatch(/^Sync Policy:\s+Manual$/m);
    expect(summary).toMatch(/^Sync Status:\s+OutOfSync from HEAD \(abc1234\)$/m);
    expect(summary).toMatch(/^Health Status:\s+Progressing$/m);
    expect(summary).toMatch(/^Last Operation:\s+Succeeded 2 resources synced, 0 pruned$/m);
    expect(summary).toMatch(/^Synced As:\s+system:serviceaccount:team-a-prod:deployer$/m);
    expect(cells(conditions!)).toEqual([
      ['CONDITION', 'MESSAGE', 'LAST TRANSITION'],
      [
        'SharedResourceWarning',
        'ConfigMap/old is part of applications guestbook and other',
        '2026-11-25T10:00:00Z',
      ],
    ]);
    const rows = cells(resources!);
    expect(rows[0]).toEqual(['GROUP', 'KIND', 'NAMESPACE', 'NAME', 'STATUS', 'HEALTH', 'HOOK', 'MESSAGE']);
    expect(rows[1]).toEqual([
      'apps',
      'Deployment',
      'team-a-prod',
      'guestbook-ui',
      'OutOfSync',
      'Progressing',
      'deployment.apps/guestbook-ui configured',
    ]);
    expect(rows[3]).toEqual(['ConfigMap', 'team-a-prod', 'old', 'OutOfSync']);
  });

  it('shows Unknown sync and health before the first reconcile, and no resource table', () => {
    printApplication('table', app({}));
    expect(out).toMatch(/^Sync Status:\s+Unknown$/m);
    expect(out).toMatch(/^Health Status:\s+Unknown$/m);
    expect(out).toMatch(/^Last Operation:\s+<none>$/m);
    expect(out).not.toContain('GROUP');
  });

  it("prints the Application in Argo CD's JSON shape with -o json", () => {
    printApplication('json', guestbook);
    expect(JSON.parse(out).status).toMatchObject({
      sync: { status: 'OutOfSync', revision: SHA },
      health: { status: 'Progressing', message: 'Waiting for rollout to finish' },
      resources: [{ kind: 'Service' }, { kind: 'Deployment' }, { kind: 'ConfigMap', requiresPruning: true }],
      operationState: { phase: 'Succeeded', syncResult: { revision: SHA } },
    });
  });
});

const history = [
  {
    id: 0,
    revision: 'a'.repeat(40),
    deployedAt: '2026-11-25T09:00:00Z',
    source,
    initiatedBy: { automated: true },
    trigger: 'automated',
  },
  {
    id: 1,
    revision: 'b'.repeat(40),
    deployedAt: '2026-11-25T09:30:00Z',
    source,
    initiatedBy: { username: 'alice' },
    trigger: 'user',
  },
  {
    id: 2,
    revision: 'c'.repeat(40),
    deployedAt: '2026-11-25T10:00:00Z',
    source,
    initiatedBy: { username: 'ci-bot via ext:ci' },
    trigger: 'bus',
  },
].map((h) => apiv1.RevisionHistory.fromJSON(h));

describe('app history and rollback', () => {
  it("prints Argo's SOURCE, ID, DATE and REVISION, with who or what started each deployment", () => {
    printRevisionHistory('table', history);
    expect(cells(out)).toEqual([
      ['SOURCE', 'https://git.example.com/team-a/apps.git'],
      ['ID', 'DATE', 'REVISION', 'INITIATED-BY', 'TRIGGER'],
      ['0', '2026-11-25T09:00:00Z', 'HEAD (aaaaaaa)', 'automated', 'automated'],
      ['1', '2026-11-25T09:30:00Z', 'HEAD (bbbbbbb)', 'alice', 'user'],
      ['2', '2026-11-25T10:00:00Z', 'HEAD (ccccccc)', 'ci-bot via ext:ci', 'bus'],
    ]);
  });

  it('writes every entry with its id in -o json, 0 included, as Argo CD does', () => {
    printRevisionHistory('json', history);
    expect(JSON.parse(out).map((h: { id: number; trigger: string }) => [h.id, h.trigger])).toEqual([
      [0, 'automated'],
      [1, 'user'],
      [2, 'bus'],
    ]);
  });

  it('rolls back to the given id, or without one to the deployment before the last, as argocd app rollback', () => {
    expect(rollbackTarget('guestbook', history, undefined).id).toBe(1);
    expect(rollbackTarget('guestbook', history, 0).revision).toBe('a'.repeat(40));
    expect(() => rollbackTarget('guestbook', history, 9)).toThrow(
      "application 'guestbook' does not have deployment id '9' in history",
    );
    expect(() => rollbackTarget('guestbook', history.slice(0, 1), undefined)).toThrow(
      "application 'guestbook' should have at least two successful deployments",
    );
  });

  it('names the ids with -o name, and separates the sources of a history that changed repository', () => {
    printRevisionHistory('name', history);
    expect(out).toBe('0\n1\n2\n');
    out = '';
    const moved = apiv1.RevisionHistory.fromJSON({
      id: 3,
      revision: 'd'.repeat(40),
      deployedAt: '2026-11-25T11:00:00Z',
      source: { ...source, repoURL: 'https://git.example.com/team-a/other.git' },
      initiatedBy: { username: 'alice' },
      trigger: 'rollback',
    });
    printRevisionHistory('table', [...history, moved]);
    const blocks = out.split('\n\n');
    expect(blocks).toHaveLength(2);
    expect(cells(blocks[1]!)[0]).toEqual(['SOURCE', 'https://git.example.com/team-a/other.git']);
    expect(cells(blocks[1]!)[2]).toEqual([
      '3',
      '2026-11-25T11:00:00Z',
      'HEAD (ddddddd)',
      'alice',
      'rollback',
    ]);
  });

  it('lists every operation with --operations, dry runs and triggers included', () => {
    printOperations('table', [
      apiv1.SyncOperation.fromJSON({
        id: 'op-1',
        startedAt: '2026-11-25T09:00:00Z',
        phase: 'Succeeded',
        dryRun: true,
        revision: 'main',
        trigger: 'self-heal',
        identity: 'system:serviceaccount:a:deployer',
        initiatedBy: 'automation',
        message: 'dry run',
      }),
    ]);
    expect(cells(out)[1]).toEqual([
      'op-1',
      '2026-11-25T09:00:00Z',
      'Succeeded (dry run)',
      'main',
      'self-heal',
      'system:serviceaccount:a:deployer',
      'automation',
      'dry run',
    ]);
  });
});

describe('multi-source Applications', () => {
  const multi = apiv1.Application.fromJSON({
    metadata: { name: 'web', namespace: 'argocd' },
    spec: {
      sources: [
        { repoURL: 'https://git.example.com/charts.git', path: 'web', targetRevision: 'main' },
        { repoURL: 'https://git.example.com/values.git', targetRevision: 'v1.0.0', ref: 'values' },
      ],
    },
    status: { sync: { status: 'Synced', revision: '', revisions: ['a'.repeat(40), 'b'.repeat(40)] } },
  });

  it("shows each source's target and commit (status.sync.revisions)", () => {
    expect(syncStatusLine(multi)).toBe('Synced to main (aaaaaaa), v1.0.0 (bbbbbbb)');
  });

  it('says OutOfSync from each target, a target without a commit yet, and Unknown alone', () => {
    const withStatus = (sync: Record<string, unknown>) =>
      apiv1.Application.fromJSON({ ...(apiv1.Application.toJSON(multi) as object), status: { sync } });
    expect(syncStatusLine(withStatus({ status: 'OutOfSync', revisions: ['a'.repeat(40)] }))).toBe(
      'OutOfSync from main (aaaaaaa), v1.0.0',
    );
    expect(syncStatusLine(withStatus({}))).toBe('Unknown');
  });

  it("prints the history's REVISION as each source's target and commit", () => {
    printRevisionHistory('table', [
      apiv1.RevisionHistory.fromJSON({
        id: 3,
        revisions: ['a'.repeat(40), 'b'.repeat(40)],
        sources: [
          { repoURL: 'https://git.example.com/charts.git', path: 'web', targetRevision: 'main' },
          { repoURL: 'https://git.example.com/values.git', ref: 'values' },
        ],
      }),
    ]);
    expect(out).toContain('main (aaaaaaa), HEAD (bbbbbbb)');
  });

  it('prints one Source row per source', () => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      out.push(String(s));
      return true;
    });
    try {
      printApplication('table', multi);
    } finally {
      spy.mockRestore();
    }
    expect(out.join('')).toContain('https://git.example.com/values.git  v1.0.0  ref values');
    expect(out.join('')).not.toContain('Repo:');
  });
});
