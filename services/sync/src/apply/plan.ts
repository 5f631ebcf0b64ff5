// The order of a sync, as Argo CD users expect it (pure, no I/O): objects are checked (apiVersion,
// kind and name present, no duplicates, valid wave and hook annotations), hooks are separated by
// phase (PreSync, Sync, PostSync, SyncFail; Skip objects are left out), and each phase is applied
// wave by wave (argocd.argoproj.io/sync-wave, default 0), kinds in Argo CD's order within a wave.
import type { KubeObject } from '../manifests/manifest-source.js';

export const HOOK_ANNOTATION = 'argocd.argoproj.io/hook';
export const HOOK_DELETE_POLICY_ANNOTATION = 'argocd.argoproj.io/hook-delete-policy';
export const WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

export type HookPhase = 'PreSync' | 'Sync' | 'PostSync' | 'SyncFail';
export type HookDeletePolicy = 'BeforeHookCreation' | 'HookSucceeded' | 'HookFailed';

const HOOK_PHASES = new Set(['PreSync', 'Sync', 'PostSync', 'SyncFail', 'Skip']);
const DELETE_POLICIES = new Set(['BeforeHookCreation', 'HookSucceeded', 'HookFailed']);

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

export interface PlannedObject {
  object: KubeObject;
  ref: ObjectRef;
  group: string;
  wave: number;
  /** Set for hooks: the phases it runs in and its delete policies. */
  hook?: { phases: HookPhase[]; deletePolicies: HookDeletePolicy[] };
}

export interface SyncPlan {
  /** Each phase: waves in ascending order, objects in kind order. */
  preSync: PlannedObject[][];
  sync: PlannedObject[][];
  postSync: PlannedObject[][];
  syncFail: PlannedObject[][];
  /** The non-hook objects: what the Application owns (tracked for prune). */
  resources: PlannedObject[];
}

export class PlanError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

const KIND_ORDER = [
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodSecurityPolicy',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
];
const kindRank = (kind: string) => {
  const i = KIND_ORDER.indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
};

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function refKey(ref: ObjectRef): string {
  return `${groupOf(ref.apiVersion)}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

export function describeRef(ref: ObjectRef): string {
  const g = groupOf(ref.apiVersion);
  return `${g ? `${g}/` : ''}${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

/** Checks the objects' identity fields; returns the problems, each naming the object by position. */
export function objectProblems(objects: readonly unknown[]): string[] {
  const problems: string[] = [];
  objects.forEach((o, i) => {
    const obj = o as Partial<KubeObject> | null;
    const at = `object ${i + 1}`;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      problems.push(`${at}: expected an object`);
      return;
    }
    if (typeof obj.apiVersion !== 'string' || obj.apiVersion === '')
      problems.push(`${at}: apiVersion: required`);
    if (typeof obj.kind !== 'string' || obj.kind === '') problems.push(`${at}: kind: required`);
    if (typeof obj.metadata?.name !== 'string' || obj.metadata.name === '')
      problems.push(`${at}: metadata.name: required`);
  });
  return problems;
}

/**
 * Plans the sync of objects whose namespaces are already resolved (namespaced objects have one,
 * cluster-scoped ones none). Throws PlanError listing every problem.
 */
export function planSync(objects: readonly KubeObject[]): SyncPlan {
  const problems: string[] = [];
  const seen = new Set<string>();
  const planned: PlannedObject[] = [];
  for (const object of objects) {
    const ref: ObjectRef = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      namespace: object.metadata.namespace,
      name: object.metadata.name,
    };
    const where = describeRef(ref);
    const key = refKey(ref);
    if (seen.has(key)) problems.push(`${where}: duplicate object`);
    seen.add(key);
    const annotations = object.metadata.annotations ?? {};
    const waveText = annotations[WAVE_ANNOTATION];
    const wave = waveText === undefined ? 0 : Number(waveText);
    if (!Number.isInteger(wave))
      problems.push(
        `${where}: metadata.annotations["${WAVE_ANNOTATION}"]: expected an integer, got ${JSON.stringify(waveText)}`,
      );
    const hookText = annotations[HOOK_ANNOTATION];
    let hook: PlannedObject['hook'];
    if (hookText !== undefined) {
      const phases = hookText
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = phases.filter((p) => !HOOK_PHASES.has(p));
      if (bad.length > 0)
        problems.push(`${where}: metadata.annotations["${HOOK_ANNOTATION}"]: unknown hook ${bad.join(', ')}`);
      if (phases.includes('Skip')) continue;
      const policies = (annotations[HOOK_DELETE_POLICY_ANNOTATION] ?? 'BeforeHookCreation')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const badPolicy = policies.filter((p) => !DELETE_POLICIES.has(p));
      if (badPolicy.length > 0)
        problems.push(
          `${where}: metadata.annotations["${HOOK_DELETE_POLICY_ANNOTATION}"]: unknown policy ${badPolicy.join(', ')}`,
        );
      hook = { phases: phases as HookPhase[], deletePolicies: policies as HookDeletePolicy[] };
    }
    planned.push({
      object,
      ref,
      group: groupOf(object.apiVersion),
      wave: Number.isInteger(wave) ? wave : 0,
      ...(hook ? { hook } : {}),
    });
  }
  if (problems.length > 0) throw new PlanError(problems);
  const phase = (p: HookPhase, includeResources: boolean) =>
    byWave(planned.filter((o) => (o.hook ? o.hook.phases.includes(p) : includeResources)));
  return {
    preSync: phase('PreSync', false),
    sync: phase('Sync', true),
    postSync: phase('PostSync', false),
    syncFail: phase('SyncFail', false),
    resources: planned.filter((o) => !o.hook),
  };
}

function byWave(objects: PlannedObject[]): PlannedObject[][] {
  const waves = new Map<number, PlannedObject[]>();
  for (const o of objects) waves.set(o.wave, [...(waves.get(o.wave) ?? []), o]);
  return [...waves.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, list]) =>
      list.sort(
        (x, y) => kindRank(x.ref.kind) - kindRank(y.ref.kind) || x.ref.name.localeCompare(y.ref.name),
      ),
    );
}
