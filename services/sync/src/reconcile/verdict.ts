// The reconciler's verdict on one Application (pure, no I/O): each declared object against its live
// object (@capstan/diff compareResource, the Application's compiled ignoreDifferences), live objects
// this Application's tracking id marks that git no longer declares (requiresPruning), and health
// (@capstan/health, aggregated as Argo CD's setApplicationHealth does). Hooks never reach here: the
// caller leaves them out, as Argo CD does not compare them.
import { compareResource, type IgnoreRules, type KubeObjectLike } from '@capstan/diff';
import { worstHealth, type HealthAssessor, type HealthStatus, type HealthStatusCode } from '@capstan/health';
import { canonicalJson } from '@capstan/policy';

export type SyncCode = 'Synced' | 'OutOfSync' | 'Unknown';

export interface ResourceVerdict {
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  status: SyncCode;
  health?: HealthStatus;
  requiresPruning?: boolean;
  message?: string;
}

export interface Verdict {
  /** revisions: a multi-source Application's commit per source (Argo CD's status.sync.revisions). */
  sync: { status: SyncCode; revision?: string; revisions?: string[] };
  health: HealthStatus;
  message?: string;
  resources: ResourceVerdict[];
  /** Argo CD's ExcludedResourceWarning messages (declared objects argocd-cm excludes). */
  excluded?: string[];
}

/** One object of the comparison: declared (desired set), live, or both. */
export interface ResourcePair {
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  desired: KubeObjectLike | undefined;
  live: KubeObjectLike | undefined;
}

export const COMPARE_OPTIONS_ANNOTATION = 'argocd.argoproj.io/compare-options';
export const IGNORE_HEALTHCHECK_ANNOTATION = 'argocd.argoproj.io/ignore-healthcheck';

function annotation(obj: KubeObjectLike | undefined, key: string): string | undefined {
  const value = (obj?.metadata?.annotations as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** Argo CD's HasAnnotationOption: a comma-separated list of options in the annotation. */
export function hasCompareOption(obj: KubeObjectLike | undefined, option: string): boolean {
  return (annotation(obj, COMPARE_OPTIONS_ANNOTATION) ?? '').split(',').some((o) => o.trim() === option);
}

export interface VerdictInput {
  pairs: readonly ResourcePair[];
  revision: string | undefined;
  revisions?: readonly string[] | undefined;
  ignore: IgnoreRules;
  health: HealthAssessor;
  fieldManager: string;
  /** ExcludedResourceWarning messages, carried into the verdict as they are. */
  excluded?: readonly string[];
}

export function verdictOf(input: VerdictInput): Verdict {
  let outOfSync = false;
  const resources: ResourceVerdict[] = [];
  const healths: { code: HealthStatusCode; message?: string }[] = [];
  let declaredOrLive = false;
  let anyLive = false;
  for (const p of input.pairs) {
    const r: ResourceVerdict = {
      group: p.group,
      version: p.version,
      kind: p.kind,
      namespace: p.namespace,
      name: p.name,
      status: 'Synced',
    };
    if (p.desired && p.live) {
      const cmp = compareResource(p.desired, p.live, {
        ignore: input.ignore,
        fieldManager: input.fieldManager,
      });
      if (cmp.status === 'OutOfSync') {
        r.status = 'OutOfSync';
        outOfSync = true;
        if (cmp.differences.length > 0) r.message = `differs at ${cmp.differences.slice(0, 5).join(', ')}`;
      }
    } else if (p.desired) {
      r.status = 'OutOfSync';
      outOfSync = true;
    } else {
      // Live, tracked by this Application, no longer in git.
      r.status = 'OutOfSync';
      r.requiresPruning = true;
      const extraneous =
        hasCompareOption(p.live, 'IgnoreExtraneous') ||
        compareResource(undefined, p.live, { ignore: input.ignore, fieldManager: input.fieldManager })
          .ignoreExtraneous;
      if (!extraneous) outOfSync = true;
    }
    declaredOrLive = true;
    if (p.live) anyLive = true;
    const h = healthOf(p, input.health);
    if (h) {
      r.health = h;
      // Missing objects do not make the Application Missing: OutOfSync says it (Argo CD).
      if (!(p.live === undefined && h.status === 'Missing'))
        healths.push({ code: h.status, ...(h.message ? { message: h.message } : {}) });
    }
    resources.push(r);
  }
  let health: HealthStatus = { status: worstHealth(healths.map((h) => h.code)) };
  const cause = healths.find((h) => h.code === health.status && h.code !== 'Healthy' && h.message);
  if (cause?.message) health = { ...health, message: cause.message };
  // Expected to have objects but none is live: Missing (unless something is already worse).
  if (declaredOrLive && !anyLive && worstHealth([health.status, 'Missing']) === 'Missing')
    health = { status: 'Missing' };
  return {
    sync: {
      status: outOfSync ? 'OutOfSync' : 'Synced',
      ...(input.revision ? { revision: input.revision } : {}),
      ...(input.revisions ? { revisions: [...input.revisions] } : {}),
    },
    health,
    resources: resources.sort(byRef),
    ...(input.excluded && input.excluded.length > 0 ? { excluded: [...input.excluded].sort() } : {}),
  };
}

function healthOf(p: ResourcePair, assessor: HealthAssessor): HealthStatus | undefined {
  if (p.live === undefined) return { status: 'Missing' };
  if (annotation(p.live, IGNORE_HEALTHCHECK_ANNOTATION) === 'true') return undefined;
  return assessor.assess(p.live);
}

const refText = (r: ResourceVerdict) => `${r.group}/${r.kind}/${r.namespace}/${r.name}`;
const byRef = (a: ResourceVerdict, b: ResourceVerdict) => (refText(a) < refText(b) ? -1 : 1);

/** The verdict when the comparison could not be made: why, as the message (Argo's ComparisonError). */
export function unknownVerdict(message: string, revision?: string, revisions?: readonly string[]): Verdict {
  return {
    sync: {
      status: 'Unknown',
      ...(revision ? { revision } : {}),
      ...(revisions ? { revisions: [...revisions] } : {}),
    },
    health: { status: 'Unknown' },
    message,
    resources: [],
  };
}

/** What decides whether a verdict changed: everything but when it was reached. */
export function fingerprintOf(v: Verdict): string {
  return canonicalJson(v);
}
