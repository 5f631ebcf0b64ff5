// What the workload controllers and the kubelet would write into a workload's status (pure, no I/O).
// The test API servers run neither kube-controller-manager nor a kubelet, so nothing ever reports a
// Deployment available or a Job complete; workload-controllers.ts writes these statuses through the
// status subresource, as those controllers would on a healthy cluster with one node. What the
// stand-in cannot know (whether an image pulls, how a container exits) it reads from conventions:
//   - an image from a registry on the reserved `.invalid` top-level domain (RFC 2606), e.g.
//     `registry.invalid/app:1`, never pulls: the workload stays unavailable, and a Deployment passes
//     its progressDeadlineSeconds (ProgressDeadlineExceeded) as the deployment controller reports it;
//   - the pod template annotation `capstan.test/exit-code: "<n>"` is how its containers exit
//     (Jobs and Pods that run to completion; default 0);
//   - the annotation `capstan.test/controller: manual` on the object leaves its status to the test.
// The statuses copy the fields and messages of Kubernetes v1.36's controllers, which Argo CD's health
// rules read.

export const MANUAL_ANNOTATION = 'capstan.test/controller';
export const EXIT_CODE_ANNOTATION = 'capstan.test/exit-code';

import { isDeepStrictEqual } from 'node:util';

type Obj = Record<string, unknown>;
export interface Workload {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    generation?: number;
    creationTimestamp?: string | Date;
    annotations?: Record<string, string>;
  };
  spec?: Obj;
  status?: Obj;
}

export interface ControllerView {
  /** When the stand-in first saw this generation of the object (the deadline counts from there). */
  firstSeen: number;
  now: number;
}

const podSpecOf = (w: Workload): Obj | undefined =>
  w.kind === 'Pod' ? w.spec : ((w.spec?.template as Obj | undefined)?.spec as Obj | undefined);

const podAnnotationsOf = (w: Workload): Record<string, string> =>
  w.kind === 'Pod'
    ? (w.metadata?.annotations ?? {})
    : ((((w.spec?.template as Obj | undefined)?.metadata as Obj | undefined)?.annotations as
        Record<string, string> | undefined) ?? {});

function imagesOf(w: Workload): string[] {
  const spec = podSpecOf(w);
  const containers = [
    ...((spec?.initContainers as Obj[] | undefined) ?? []),
    ...((spec?.containers as Obj[] | undefined) ?? []),
  ];
  return containers.map((c) => String(c.image ?? ''));
}

/** An image whose registry host is on the `.invalid` TLD: nothing can pull it. */
export function unpullable(image: string): boolean {
  const first = image.split('/')[0] ?? '';
  return image.includes('/') && /\.invalid(:\d+)?$/.test(first);
}

const pulls = (w: Workload) => !imagesOf(w).some(unpullable);
const exitCode = (w: Workload) => Number(podAnnotationsOf(w)[EXIT_CODE_ANNOTATION] ?? '0') || 0;
const replicasOf = (w: Workload) => (typeof w.spec?.replicas === 'number' ? w.spec.replicas : 1);
const generationOf = (w: Workload) => w.metadata?.generation ?? 1;
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** A stable stand-in for the pod-template-hash the controllers put in ReplicaSet and revision names. */
export function templateHash(w: Workload): string {
  const text = JSON.stringify(w.spec?.template ?? w.spec ?? {});
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h.toString(36).slice(0, 10);
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, at: number) {
  return { type, status, reason, message, lastUpdateTime: iso(at), lastTransitionTime: iso(at) };
}

function deploymentStatus(w: Workload, view: ControllerView): Obj {
  const n = replicasOf(w);
  const rs = `${w.metadata?.name}-${templateHash(w)}`;
  const base = { observedGeneration: generationOf(w), replicas: n, updatedReplicas: n };
  if (pulls(w) || n === 0) {
    return {
      ...base,
      readyReplicas: n,
      availableReplicas: n,
      conditions: [
        condition(
          'Available',
          'True',
          'MinimumReplicasAvailable',
          'Deployment has minimum availability.',
          view.now,
        ),
        condition(
          'Progressing',
          'True',
          'NewReplicaSetAvailable',
          `ReplicaSet "${rs}" has successfully progressed.`,
          view.now,
        ),
      ],
    };
  }
  const deadlineS =
    typeof w.spec?.progressDeadlineSeconds === 'number' ? w.spec.progressDeadlineSeconds : 600;
  const exceeded = view.now - view.firstSeen >= deadlineS * 1000;
  return {
    ...base,
    unavailableReplicas: n,
    conditions: [
      condition(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
        view.firstSeen,
      ),
      exceeded
        ? condition(
            'Progressing',
            'False',
            'ProgressDeadlineExceeded',
            `ReplicaSet "${rs}" has timed out progressing.`,
            view.now,
          )
        : condition(
            'Progressing',
            'True',
            'ReplicaSetUpdated',
            `ReplicaSet "${rs}" is progressing.`,
            view.firstSeen,
          ),
    ],
  };
}

function statefulSetStatus(w: Workload): Obj {
  const n = replicasOf(w);
  const revision = `${w.metadata?.name}-${templateHash(w)}`;
  const ready = pulls(w) ? n : 0;
  return {
    observedGeneration: generationOf(w),
    replicas: n,
    readyReplicas: ready,
    availableReplicas: ready,
    currentReplicas: n,
    updatedReplicas: n,
    currentRevision: revision,
    updateRevision: revision,
    collisionCount: 0,
  };
}

function daemonSetStatus(w: Workload): Obj {
  // One node: one pod wanted.
  const ready = pulls(w) ? 1 : 0;
  return {
    observedGeneration: generationOf(w),
    desiredNumberScheduled: 1,
    currentNumberScheduled: 1,
    updatedNumberScheduled: 1,
    numberMisscheduled: 0,
    numberReady: ready,
    numberAvailable: ready,
    ...(ready === 0 ? { numberUnavailable: 1 } : {}),
  };
}

function jobStatus(w: Workload, view: ControllerView): Obj {
  const started = iso(view.firstSeen);
  if (!pulls(w)) return { startTime: started, active: 1, ready: 0 };
  const completions = typeof w.spec?.completions === 'number' ? w.spec.completions : 1;
  if (exitCode(w) !== 0) {
    const message = 'Job has reached the specified backoff limit';
    return {
      startTime: started,
      failed: ((w.spec?.backoffLimit as number | undefined) ?? 6) + 1,
      conditions: [
        condition('FailureTarget', 'True', 'BackoffLimitExceeded', message, view.now),
        condition('Failed', 'True', 'BackoffLimitExceeded', message, view.now),
      ],
    };
  }
  return {
    startTime: started,
    completionTime: iso(view.now),
    succeeded: completions,
    conditions: [
      condition(
        'SuccessCriteriaMet',
        'True',
        'CompletionsReached',
        'Reached expected number of succeeded pods',
        view.now,
      ),
      condition(
        'Complete',
        'True',
        'CompletionsReached',
        'Reached expected number of succeeded pods',
        view.now,
      ),
    ],
  };
}

function podStatus(w: Workload, view: ControllerView): Obj {
  const containers = ((w.spec?.containers as Obj[] | undefined) ?? []).map((c) => ({
    name: String(c.name),
    image: String(c.image),
  }));
  const restartAlways = (w.spec?.restartPolicy ?? 'Always') === 'Always';
  const at = iso(view.now);
  if (!pulls(w)) {
    return {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: at }],
      containerStatuses: containers.map((c) => ({
        ...c,
        ready: false,
        restartCount: 0,
        imageID: '',
        state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } },
      })),
    };
  }
  if (restartAlways) {
    return {
      phase: 'Running',
      startTime: iso(view.firstSeen),
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
        { type: 'Initialized', status: 'True', lastTransitionTime: at },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: at },
        { type: 'Ready', status: 'True', lastTransitionTime: at },
      ],
      containerStatuses: containers.map((c) => ({
        ...c,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: iso(view.firstSeen) } },
      })),
    };
  }
  const code = exitCode(w);
  return {
    phase: code === 0 ? 'Succeeded' : 'Failed',
    startTime: iso(view.firstSeen),
    containerStatuses: containers.map((c) => ({
      ...c,
      ready: false,
      restartCount: 0,
      state: {
        terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error', finishedAt: at },
      },
    })),
  };
}

/** The kinds the stand-in plays the controller of. */
export const SIMULATED_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'Pod'] as const;

/**
 * The status the controllers would write now, or undefined when the object is left alone (manual,
 * being deleted, a kind not simulated).
 */
export function controllerStatus(w: Workload, view: ControllerView): Obj | undefined {
  if (w.metadata?.annotations?.[MANUAL_ANNOTATION] === 'manual') return undefined;
  switch (w.kind) {
    case 'Deployment':
      return deploymentStatus(w, view);
    case 'StatefulSet':
      return statefulSetStatus(w);
    case 'DaemonSet':
      return daemonSetStatus(w);
    case 'Job':
      return jobStatus(w, view);
    case 'Pod':
      return podStatus(w, view);
    default:
      return undefined;
  }
}

const TIMESTAMPS = new Set([
  'lastUpdateTime',
  'lastTransitionTime',
  'startTime',
  'completionTime',
  'startedAt',
  'finishedAt',
]);

/** Without timestamps and the zero values the API server omits (`omitempty`), keys in any order. */
function essential(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(essential);
  if (value instanceof Date) return undefined;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (TIMESTAMPS.has(k)) continue;
      const e = essential(v);
      if (e !== undefined) out[k] = e;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value === 0 || value === '' || value === false || value === null ? undefined : value;
}

/**
 * Whether writing `next` would change what the object says: compared without timestamps and zero
 * values, so the stand-in writes once per generation (and once more when a deadline passes), and
 * its own write does not make it write again.
 */
export function statusChanged(current: Obj | undefined, next: Obj): boolean {
  return !isDeepStrictEqual(essential(current), essential(next));
}
