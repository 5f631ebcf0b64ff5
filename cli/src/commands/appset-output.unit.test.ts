// Each output format of `capstan appset` from fixed ApplicationSet and verdict values: the summary and
// conditions of get/create, list's columns (table, wide, name), the generated Applications with the
// caller's verdicts, and json/yaml as Argo CD manifests.
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  printApplicationSet,
  printApplicationSets,
  printGenerated,
  printVerdicts,
  refused,
} from './appset-output.js';
import { generatedApps, guestbookSet, multiSourceSet, verdicts } from './test-support/appset-fixtures.js';

let out = '';
beforeEach(() => {
  out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

/** Table lines as cells (columns are separated by two or more blanks). */
const cells = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

describe('appset get (and create) output', () => {
  it("prints argocd's summary, then the conditions table", () => {
    printApplicationSet('wide', guestbookSet);
    const [summary, conditions] = out.split('\n\n');
    expect(summary!.split('\n')).toEqual([
      'Name:       argocd/guestbook',
      'Project:    team-a',
      'Server:     https://kubernetes.default.svc',
      'Namespace:  team-a-{{cluster}}',
      'Source:',
      '- Repo:     https://git.example.com/team-a/apps.git',
      '  Target:   HEAD',
      '  Path:     guestbook',
      'SyncPolicy: Automated (Prune)',
      'Set Policy: create-update,preserveResourcesOnDeletion',
    ]);
    expect(cells(conditions!)).toEqual([
      ['CONDITION', 'STATUS', 'MESSAGE', 'LAST TRANSITION'],
      [
        'ResourcesUpToDate',
        'True',
        'All applications have been generated successfully',
        '2026-11-25T04:00:00Z',
      ],
      [
        'ErrorOccurred',
        'False',
        'Successfully generated parameters for all Applications',
        '2026-11-25T04:00:00Z',
      ],
    ]);
  });

  it("lists every source, Argo's default project and a destination by name; no conditions, no table", () => {
    printApplicationSet('wide', multiSourceSet);
    expect(out).toBe(
      [
        'Name:       addons',
        'Project:    default',
        'Server:     {{name}}',
        'Namespace:  addons',
        'Sources:',
        '- Repo:     https://charts.example.com',
        '  Target:   1.2.3',
        '  Chart:    addons',
        '- Repo:     https://git.example.com/values.git',
        '  Target:   main',
        '  Ref:      values',
        'SyncPolicy: <none>',
        'Set Policy: <none>',
        '',
      ].join('\n'),
    );
  });

  it('prints json and yaml as a manifest that can be applied again', () => {
    printApplicationSet('json', guestbookSet);
    const json = JSON.parse(out) as Record<string, unknown>;
    expect(json).toMatchObject({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'guestbook', namespace: 'argocd', labels: { team: 'a' } },
      spec: { syncPolicy: { applicationsSync: 'create-update' } },
      status: { conditions: [{ type: 'ResourcesUpToDate' }, { type: 'ErrorOccurred' }] },
    });
    out = '';
    printApplicationSet('yaml', multiSourceSet);
    expect(parse(out)).toEqual({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'addons' },
      spec: multiSourceSet.spec,
    });
  });
});

describe('appset list output', () => {
  const sets = [guestbookSet, multiSourceSet];

  it("wide (the default, as argocd's) has NAME, PROJECT, SYNCPOLICY, CONDITIONS, REPO, PATH, TARGET", () => {
    printApplicationSets('wide', sets);
    const rows = out.trim().split('\n');
    expect(cells(rows[0]!)).toEqual([
      ['NAME', 'PROJECT', 'SYNCPOLICY', 'CONDITIONS', 'REPO', 'PATH', 'TARGET'],
    ]);
    expect(cells(rows[1]!)).toEqual([
      [
        'argocd/guestbook',
        'team-a',
        'create-update,preserveResourcesOnDeletion',
        'ResourcesUpToDate',
        'https://git.example.com/team-a/apps.git',
        'guestbook',
        'HEAD',
      ],
    ]);
    // Only conditions whose status is True are listed; an empty project stays empty, as in argocd.
    expect(rows[2]).toMatch(/^ addons\s+<none>\s+<none>\s+https:\/\/charts\.example\.com\s+1\.2\.3\s*$/);
  });

  it('table has the first four columns; name the qualified names; json the manifests', () => {
    printApplicationSets('table', sets);
    expect(cells(out)[0]).toEqual(['NAME', 'PROJECT', 'SYNCPOLICY', 'CONDITIONS']);
    expect(cells(out)[1]).toEqual([
      'argocd/guestbook',
      'team-a',
      'create-update,preserveResourcesOnDeletion',
      'ResourcesUpToDate',
    ]);
    out = '';
    printApplicationSets('name', sets);
    expect(out).toBe('argocd/guestbook\naddons\n');
    out = '';
    printApplicationSets('json', sets);
    expect(
      (JSON.parse(out) as { kind: string; metadata: { name: string } }[]).map((s) => [
        s.kind,
        s.metadata.name,
      ]),
    ).toEqual([
      ['ApplicationSet', 'guestbook'],
      ['ApplicationSet', 'addons'],
    ]);
  });
});

describe('appset generate and delete output', () => {
  it("shows each Application with the caller's verdict, and verdicts on Applications no longer generated", () => {
    printGenerated('table', generatedApps, verdicts);
    expect(cells(out)).toEqual([
      ['NAME', 'CLUSTER', 'NAMESPACE', 'PROJECT', 'ACTION', 'VERDICT', 'REASON'],
      ['argocd/dev-guestbook', 'https://kubernetes.default.svc', 'team-a-dev', 'team-a', 'create', 'allowed'],
      [
        'argocd/prod-guestbook',
        'https://kubernetes.default.svc',
        'team-a-prod',
        'team-a',
        'update',
        'refused',
        'project team-a: destination https://kubernetes.default.svc,team-a-prod is not permitted',
      ],
      [
        'argocd/old-guestbook',
        'team-a',
        'delete',
        'allowed',
        'p, role:team-a-dev, applications, delete, team-a/*, allow',
      ],
    ]);
    expect(refused(verdicts).map((v) => v.name)).toEqual(['prod-guestbook']);
  });

  it('wide adds REPO, PATH and TARGET; offline (no verdicts) has no verdict columns', () => {
    printGenerated('wide', generatedApps);
    expect(cells(out)[0]).toEqual(['NAME', 'CLUSTER', 'NAMESPACE', 'PROJECT', 'REPO', 'PATH', 'TARGET']);
    expect(cells(out)[2]).toEqual([
      'argocd/prod-guestbook',
      'https://kubernetes.default.svc',
      'team-a-prod',
      'team-a',
      'https://git.example.com/team-a/apps.git',
      'guestbook',
      'HEAD',
    ]);
  });

  it('json is the Applications with their verdicts online, and the bare array offline', () => {
    printGenerated('json', generatedApps, verdicts);
    const online = JSON.parse(out) as { applications: unknown[]; verdicts: Record<string, unknown>[] };
    expect(online.applications).toEqual(generatedApps);
    expect(online.verdicts[1]).toEqual({
      name: 'prod-guestbook',
      namespace: 'argocd',
      project: 'team-a',
      action: 'update',
      allowed: false,
      reason: 'project team-a: destination https://kubernetes.default.svc,team-a-prod is not permitted',
    });
    out = '';
    printGenerated('yaml', generatedApps);
    expect(parse(out)).toEqual(generatedApps);
  });

  it("delete lists each Application deleted or preserved with the caller's verdict", () => {
    printVerdicts('table', verdicts.slice(0, 1));
    expect(cells(out)).toEqual([
      ['APPLICATION', 'PROJECT', 'ACTION', 'VERDICT', 'REASON'],
      ['argocd/dev-guestbook', 'team-a', 'create', 'allowed'],
    ]);
  });
});
