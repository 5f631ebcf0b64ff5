import { describe, expect, it } from 'vitest';
import { objectProblems, planSync, PlanError } from './plan.js';
import type { KubeObject } from '../manifests/manifest-source.js';

const obj = (
  kind: string,
  name: string,
  annotations: Record<string, string> = {},
  apiVersion = 'v1',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: kind === 'Namespace' ? undefined : 'ns', annotations },
});
const names = (waves: { ref: { kind: string; name: string } }[][]) =>
  waves.map((w) => w.map((o) => `${o.ref.kind}/${o.ref.name}`));

describe('planning a sync', () => {
  it('given objects in several waves, when planned, then waves ascend and kinds follow Argo CD order within a wave', () => {
    const plan = planSync([
      obj('Deployment', 'web', {}, 'apps/v1'),
      obj('ConfigMap', 'late', { 'argocd.argoproj.io/sync-wave': '5' }),
      obj('ServiceAccount', 'sa'),
      obj('Namespace', 'ns'),
      obj('ConfigMap', 'early', { 'argocd.argoproj.io/sync-wave': '-1' }),
    ]);
    expect(names(plan.sync)).toEqual([
      ['ConfigMap/early'],
      ['Namespace/ns', 'ServiceAccount/sa', 'Deployment/web'],
      ['ConfigMap/late'],
    ]);
    expect(plan.resources).toHaveLength(5);
  });

  it('given hooks, when planned, then each phase gets its hooks, Sync hooks run with the resources, Skip is left out and hooks are not tracked', () => {
    const plan = planSync([
      obj('ConfigMap', 'app'),
      obj('Job', 'migrate', { 'argocd.argoproj.io/hook': 'PreSync' }, 'batch/v1'),
      obj(
        'Job',
        'smoke',
        { 'argocd.argoproj.io/hook': 'PostSync', 'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded' },
        'batch/v1',
      ),
      obj('ConfigMap', 'during', { 'argocd.argoproj.io/hook': 'Sync' }),
      obj('ConfigMap', 'alert', { 'argocd.argoproj.io/hook': 'SyncFail' }),
      obj('ConfigMap', 'skipped', { 'argocd.argoproj.io/hook': 'Skip' }),
    ]);
    expect(names(plan.preSync)).toEqual([['Job/migrate']]);
    expect(names(plan.sync)).toEqual([['ConfigMap/app', 'ConfigMap/during']]);
    expect(names(plan.postSync)).toEqual([['Job/smoke']]);
    expect(names(plan.syncFail)).toEqual([['ConfigMap/alert']]);
    expect(plan.resources.map((o) => o.ref.name)).toEqual(['app']);
    expect(plan.preSync[0]![0]!.hook!.deletePolicies).toEqual(['BeforeHookCreation']);
    expect(plan.postSync[0]![0]!.hook!.deletePolicies).toEqual(['HookSucceeded']);
  });

  it('given duplicates, bad waves and unknown hooks, when planned, then every problem is reported', () => {
    const attempt = () =>
      planSync([
        obj('ConfigMap', 'a'),
        obj('ConfigMap', 'a'),
        obj('ConfigMap', 'b', { 'argocd.argoproj.io/sync-wave': 'soon' }),
        obj('ConfigMap', 'c', { 'argocd.argoproj.io/hook': 'Later' }),
        obj('ConfigMap', 'd', {
          'argocd.argoproj.io/hook': 'PreSync',
          'argocd.argoproj.io/hook-delete-policy': 'Never',
        }),
      ]);
    expect(attempt).toThrow(PlanError);
    try {
      attempt();
    } catch (err) {
      expect((err as PlanError).problems).toEqual([
        'ConfigMap ns/a: duplicate object',
        'ConfigMap ns/b: metadata.annotations["argocd.argoproj.io/sync-wave"]: expected an integer, got "soon"',
        'ConfigMap ns/c: metadata.annotations["argocd.argoproj.io/hook"]: unknown hook Later',
        'ConfigMap ns/d: metadata.annotations["argocd.argoproj.io/hook-delete-policy"]: unknown policy Never',
      ]);
    }
  });

  it('given objects without apiVersion, kind or name, when checked, then each is named by position', () => {
    expect(
      objectProblems([
        { kind: 'ConfigMap', metadata: { name: 'x' } },
        { apiVersion: 'v1', metadata: {} },
        'text',
      ]),
    ).toEqual([
      'object 1: apiVersion: required',
      'object 2: kind: required',
      'object 2: metadata.name: required',
      'object 3: expected an object',
    ]);
  });
});
