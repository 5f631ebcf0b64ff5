// AppProject syncWindows with Argo CD's semantics (pkg/apis/application/v1alpha1 SyncWindows:
// Matches, Active, CanSync), evaluated through the whole parentProject chain: any project of the
// chain whose windows block the sync blocks it.
//
// A window is `kind` allow or deny, opens at each time its 5-field cron `schedule` fires (in
// `timeZone`, UTC when empty) and stays open for `duration` (a Go duration: "1h", "30m", "1h30m").
// It applies to an Application when one of its `applications` globs matches the Application's
// name, one of `namespaces` its destination namespace, or one of `clusters` its destination
// cluster name or server (all of the non-empty lists with `andOperator`). For the windows that
// apply: an active deny window blocks (a manual sync passes when every active deny window has
// `manualSync`); otherwise an active allow window lets the sync through; otherwise, when allow
// windows exist (all inactive), the sync is blocked (a manual sync passes when every one of them
// has `manualSync`); with no applicable window the sync passes.
import { cachedGlob, compileGlob, GlobSyntaxError } from '@capstan/glob';
import { CronExpressionParser } from 'cron-parser';
import type { PolicyIssue } from '../issues.js';
import type { SyncWindow } from '../manifests/schemas.js';

export interface WindowTarget {
  /** Application name. */
  readonly name: string;
  readonly namespace: string;
  /** Destination as resolved: server URL and, when known, the cluster's name. */
  readonly server: string;
  readonly clusterName: string | undefined;
}

export interface ActiveWindow {
  readonly project: string;
  readonly index: number;
  readonly kind: 'allow' | 'deny';
  readonly schedule: string;
  readonly duration: string;
  readonly timeZone: string;
  readonly manualSync: boolean;
}

export interface WindowVerdict {
  readonly allowed: boolean;
  readonly reason: string;
  /** The project whose windows blocked. */
  readonly deniedBy?: string;
  /** The applicable windows that are open now, along the chain. */
  readonly active: readonly ActiveWindow[];
}

const DURATION_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration for non-negative durations; undefined when it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * DURATION_UNIT_MS[m[2]!]!;
    at = re.lastIndex;
  }
  return at === text.length && text.length > 0 ? total : undefined;
}

function zoneProblem(zone: string): string | undefined {
  if (zone === '') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${JSON.stringify(zone)}`;
  }
}

function scheduleProblem(schedule: string): string | undefined {
  // Argo CD's parser: minute hour day-of-month month day-of-week, no seconds, no descriptors.
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5 || schedule.includes('@'))
    return `invalid schedule ${JSON.stringify(schedule)}: expected 5 fields (minute hour day-of-month month day-of-week)`;
  try {
    CronExpressionParser.parse(schedule, { strict: false });
    return undefined;
  } catch (err) {
    return `invalid schedule ${JSON.stringify(schedule)}: ${(err as Error).message}`;
  }
}

/** Write-time problems of spec.syncWindows (the shape is the schema's). */
export function syncWindowIssues(windows: readonly SyncWindow[]): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  windows.forEach((w, i) => {
    const at = `spec.syncWindows[${i}]`;
    if (w.kind !== 'allow' && w.kind !== 'deny')
      issues.push({
        path: `${at}.kind`,
        message: `must be "allow" or "deny", not ${JSON.stringify(w.kind)}`,
      });
    const s = scheduleProblem(w.schedule);
    if (s) issues.push({ path: `${at}.schedule`, message: s });
    if (parseGoDuration(w.duration) === undefined)
      issues.push({
        path: `${at}.duration`,
        message: `invalid duration ${JSON.stringify(w.duration)}: expected a Go duration such as "1h", "30m" or "1h30m"`,
      });
    const z = zoneProblem(w.timeZone ?? '');
    if (z) issues.push({ path: `${at}.timeZone`, message: z });
    for (const field of ['applications', 'namespaces', 'clusters'] as const) {
      (w[field] ?? []).forEach((pattern, j) => {
        try {
          compileGlob(pattern);
        } catch (err) {
          if (!(err instanceof GlobSyntaxError)) throw err;
          issues.push({
            path: `${at}.${field}[${j}]`,
            message: `invalid glob ${JSON.stringify(pattern)}: ${err.detail}`,
          });
        }
      });
    }
    if (!w.applications?.length && !w.namespaces?.length && !w.clusters?.length)
      issues.push({
        path: at,
        message: 'applies to nothing: set applications, namespaces or clusters (a glob such as "*" for all)',
      });
  });
  return issues;
}

/** Argo CD's SyncWindow.active: the last opening before `now` is less than `duration` ago. */
export function windowActive(
  w: { readonly schedule: string; readonly duration: string; readonly timeZone?: string | undefined },
  now: Date,
): boolean {
  const duration = parseGoDuration(w.duration);
  if (duration === undefined || duration <= 0) return false;
  const from = new Date(now.getTime() - duration);
  const tz = w.timeZone ? w.timeZone : 'UTC';
  const next = CronExpressionParser.parse(w.schedule, { currentDate: from, tz }).next().toDate();
  return next.getTime() < now.getTime();
}

const anyMatch = (patterns: readonly string[] | undefined, value: string | undefined) =>
  !!value && (patterns ?? []).some((p) => cachedGlob(p).match(value));

/** Argo CD's SyncWindows.Matches for one window. */
export function windowApplies(w: SyncWindow, t: WindowTarget): boolean {
  const selectors: { list: readonly string[] | undefined; hit: boolean }[] = [
    { list: w.applications, hit: anyMatch(w.applications, t.name) },
    {
      list: w.clusters,
      hit: anyMatch(w.clusters, t.clusterName) || anyMatch(w.clusters, t.server),
    },
    { list: w.namespaces, hit: anyMatch(w.namespaces, t.namespace) },
  ].filter((s) => (s.list ?? []).length > 0);
  if (selectors.length === 0) return false;
  return w.andOperator ? selectors.every((s) => s.hit) : selectors.some((s) => s.hit);
}

type Indexed = { w: SyncWindow; index: number };

const describe = (x: Indexed) =>
  `${x.w.kind} window ${x.index} ("${x.w.schedule}" for ${x.w.duration}${x.w.timeZone ? ` ${x.w.timeZone}` : ''})`;

/** One project's CanSync; undefined when its windows let the sync through. */
function projectBlocks(
  windows: readonly Indexed[],
  active: readonly Indexed[],
  manual: boolean,
): string | undefined {
  const activeDeny = active.filter((x) => x.w.kind === 'deny');
  if (activeDeny.length > 0) {
    if (manual && activeDeny.every((x) => x.w.manualSync === true)) return undefined;
    return `${activeDeny.map(describe).join(', ')} ${activeDeny.length > 1 ? 'are' : 'is'} active${manual ? '' : ' (automated sync)'}`;
  }
  if (active.some((x) => x.w.kind === 'allow')) return undefined;
  const inactiveAllows = windows.filter((x) => x.w.kind === 'allow');
  if (inactiveAllows.length === 0) return undefined;
  if (manual && inactiveAllows.every((x) => x.w.manualSync === true)) return undefined;
  return `no allow window is active (${inactiveAllows.map(describe).join(', ')})`;
}

/** The sync windows verdict through a chain (the Application's project first). */
export function syncWindowsVerdict(
  chain: readonly {
    readonly name: string;
    readonly spec: { readonly syncWindows?: readonly SyncWindow[] | undefined };
  }[],
  target: WindowTarget,
  manual: boolean,
  now: Date,
): WindowVerdict {
  const active: ActiveWindow[] = [];
  let blocked: { project: string; why: string } | undefined;
  for (const p of chain) {
    const windows = (p.spec.syncWindows ?? [])
      .map((w, index) => ({ w, index }))
      .filter((x) => windowApplies(x.w, target));
    const open = windows.filter((x) => windowActive(x.w, now));
    for (const { w, index } of open)
      active.push({
        project: p.name,
        index,
        kind: w.kind as 'allow' | 'deny',
        schedule: w.schedule,
        duration: w.duration,
        timeZone: w.timeZone ?? '',
        manualSync: w.manualSync === true,
      });
    const why = blocked ? undefined : projectBlocks(windows, open, manual);
    if (why) blocked = { project: p.name, why };
  }
  if (blocked)
    return {
      allowed: false,
      deniedBy: blocked.project,
      reason: `Sync operation blocked by sync window: project ${JSON.stringify(blocked.project)}: ${blocked.why}`,
      active,
    };
  return {
    allowed: true,
    reason:
      active.length > 0 ? `sync windows allow it (${active.length} active)` : 'no sync window blocks it',
    active,
  };
}
