import { describe, expect, it } from 'vitest';
import { IN_CLUSTER_URL, application, lookupOf, project } from '../test-support/fixtures.js';
import { explainSync } from '../sync/explain.js';
import { compileProject } from './compile.js';
import { validateAppProject } from './validate.js';
import { parseGoDuration, syncWindowsVerdict, windowActive } from './sync-windows.js';

const target = { name: 'guestbook', namespace: 'prod', server: IN_CLUSTER_URL, clusterName: 'in-cluster' };
// Wednesday 2026-11-25, 23:30 UTC (00:30 on Thursday in Paris)
const NOW = new Date('2026-11-25T23:30:00Z');
const nightly = { kind: 'deny', schedule: '0 23 * * *', duration: '1h', applications: ['*'] };

function verdict(windows: Record<string, unknown>[], manual = false, now = NOW) {
  const p = project('team-a', { syncWindows: windows });
  return syncWindowsVerdict([compileProject(p)], target, manual, now);
}

describe('sync windows (Argo CD semantics)', () => {
  it('parses Go durations', () => {
    expect(parseGoDuration('1h')).toBe(3_600_000);
    expect(parseGoDuration('1h30m')).toBe(5_400_000);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    expect(parseGoDuration('90s')).toBe(90_000);
    expect(parseGoDuration('1 hour')).toBeUndefined();
    expect(parseGoDuration('')).toBeUndefined();
  });

  it('a window is active from a firing of its schedule for its duration, in its time zone', () => {
    expect(windowActive({ ...nightly }, NOW)).toBe(true);
    expect(windowActive({ ...nightly }, new Date('2026-11-26T00:00:01Z'))).toBe(false);
    expect(windowActive({ ...nightly }, new Date('2026-11-25T22:59:00Z'))).toBe(false);
    // 23:00 in Paris is 22:00 UTC: closed again at 23:30 UTC
    expect(windowActive({ ...nightly, timeZone: 'Europe/Paris' }, NOW)).toBe(false);
    expect(windowActive({ ...nightly, timeZone: 'Europe/Paris' }, new Date('2026-11-25T22:30:00Z'))).toBe(
      true,
    );
  });

  it('an active deny window blocks an automated sync and names the project and the window', () => {
    expect(verdict([nightly])).toMatchObject({
      allowed: false,
      deniedBy: 'team-a',
      reason:
        'Sync operation blocked by sync window: project "team-a": deny window 0 ("0 23 * * *" for 1h) is active (automated sync)',
    });
  });

  it('manualSync lets a manual sync through an active deny window only when every active deny window has it', () => {
    expect(verdict([{ ...nightly, manualSync: true }], true).allowed).toBe(true);
    expect(verdict([{ ...nightly, manualSync: true }], false).allowed).toBe(false);
    expect(verdict([{ ...nightly, manualSync: true }, nightly], true).allowed).toBe(false);
  });

  it('deny wins over an active allow window', () => {
    const allow = { kind: 'allow', schedule: '* * * * *', duration: '1h', applications: ['*'] };
    expect(verdict([allow, nightly]).allowed).toBe(false);
    expect(verdict([allow]).allowed).toBe(true);
  });

  it('outside every allow window a sync is blocked; manualSync on all of them lets a manual sync through', () => {
    const morning = { kind: 'allow', schedule: '0 8 * * 1-5', duration: '8h', applications: ['guest*'] };
    expect(verdict([morning])).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('no allow window is active (allow window 0 ("0 8 * * 1-5" for 8h))'),
    });
    expect(verdict([{ ...morning, manualSync: true }], true).allowed).toBe(true);
    expect(verdict([morning], false, new Date('2026-11-25T09:00:00Z')).allowed).toBe(true);
  });

  it('windows apply by application, namespace or cluster (name or server) glob; andOperator needs all', () => {
    expect(verdict([{ ...nightly, applications: ['other-*'] }]).allowed).toBe(true);
    expect(verdict([{ ...nightly, applications: undefined, namespaces: ['pro?'] }]).allowed).toBe(false);
    expect(verdict([{ ...nightly, applications: undefined, clusters: ['in-cluster'] }]).allowed).toBe(false);
    expect(
      verdict([{ ...nightly, applications: undefined, clusters: ['https://kubernetes.*'] }]).allowed,
    ).toBe(false);
    expect(verdict([{ ...nightly, namespaces: ['dev'], andOperator: true }]).allowed).toBe(true);
    expect(verdict([{ ...nightly, namespaces: ['dev'] }]).allowed).toBe(false);
  });

  it("a parent's window blocks its child's Application (through the chain)", () => {
    const parent = project('tenants', {
      sourceRepos: ['*'],
      destinations: [{ server: '*', namespace: '*' }],
      syncWindows: [nightly],
    });
    const child = project('team-a', {
      parentProject: 'tenants',
      sourceRepos: ['*'],
      destinations: [{ server: '*', namespace: '*' }],
    });
    const d = explainSync({
      application: application('guestbook', {
        project: 'team-a',
        destination: { server: IN_CLUSTER_URL, namespace: 'prod' },
      }),
      projects: lookupOf(parent, child),
      clusters: [],
      impersonation: false,
      strict: false,
      now: NOW,
      manual: false,
    });
    expect(d.allowed).toBe(false);
    expect(d.checks.find((c) => c.check === 'sync-window')).toMatchObject({
      allowed: false,
      project: 'tenants',
    });
  });

  it('refuses windows that do not parse, with the field path', () => {
    const r = validateAppProject({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'p' },
      spec: {
        syncWindows: [
          {
            kind: 'maybe',
            schedule: '0 0 0 * * *',
            duration: '1 hour',
            timeZone: 'Mars/Olympus',
            applications: ['[a'],
          },
          { kind: 'deny', schedule: '@hourly', duration: '1h' },
        ],
      },
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.issues.map((i) => i.path)).toEqual([
      'spec.syncWindows[0].kind',
      'spec.syncWindows[0].schedule',
      'spec.syncWindows[0].duration',
      'spec.syncWindows[0].timeZone',
      'spec.syncWindows[0].applications[0]',
      'spec.syncWindows[1].schedule',
      'spec.syncWindows[1]',
    ]);
  });
});
