// What `capstan app get` and `capstan app history` print, as `argocd app get` and `argocd app history`
// do (cmd/argocd/commands/app.go): the summary with `Sync Status: OutOfSync from HEAD (abc1234)` and
// the reconciler's health, the conditions, then one line per resource (the live status merged with
// the last operation's result and message); the history of successful deployments with Argo's
// ID, DATE and REVISION, plus INITIATED-BY and TRIGGER (Capstan's additions).
import { apiv1 } from '@capstan/proto';
import { printJsonOrYaml, printList, printObject, type OutputFormat } from '../output/format.js';
import { managedBy } from '../output/managed-by.js';
import { CliError } from '../errors.js';

const FULL_SHA = /^[0-9a-f]{40}$/;
const SHORT_SHA = /^[0-9a-f]{7,}$/;

/** Argo's "Sync Status:" value: `Synced to HEAD (53e28ff)`, `OutOfSync from main (abc1234)`, `Unknown`. */
export function syncStatusLine(a: apiv1.Application): string {
  const status = a.status?.sync?.status || 'Unknown';
  const sources = a.spec?.sources ?? [];
  if (sources.length > 0) {
    // A multi-source Application: each source's target, and its commit (status.sync.revisions).
    const revisions = a.status?.sync?.revisions ?? [];
    const targets = sources.map((s, i) => {
      const target = s.targetRevision || 'HEAD';
      const rev = revisions[i] ?? '';
      return rev.length > 7 && rev !== target ? `${target} (${rev.slice(0, 7)})` : target;
    });
    if (status === 'Synced') return `${status} to ${targets.join(', ')}`;
    if (status === 'OutOfSync') return `${status} from ${targets.join(', ')}`;
    return status;
  }
  const target = a.spec?.source?.targetRevision || 'HEAD';
  let line = status;
  if (status === 'Synced') line += ` to ${target}`;
  else if (status === 'OutOfSync') line += ` from ${target}`;
  const revision = a.status?.sync?.revision ?? '';
  if (!FULL_SHA.test(target) && !SHORT_SHA.test(target) && revision.length > 7)
    line += ` (${revision.slice(0, 7)})`;
  return line;
}

/** Argo's "Sync Policy:" value. */
export function syncPolicyLine(a: apiv1.Application): string {
  const automated = a.spec?.syncPolicy?.automated;
  if (!automated) return 'Manual';
  return `Automated${automated.prune ? ' (Prune)' : ''}`;
}

export interface ResourceState {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  health: string;
  hook: string;
  message: string;
}

const keyOf = (r: { group: string; kind: string; namespace: string; name: string }) =>
  `${r.group}/${r.kind}/${r.namespace}/${r.name}`;

/**
 * Argo's getResourceStates: the last operation's resources first (live sync and health status where
 * the reconciler knows the resource, the operation's message), then the other live resources sorted.
 */
export function resourceStates(a: apiv1.Application): ResourceState[] {
  const live = new Map((a.status?.resources ?? []).map((r) => [keyOf(r), r]));
  const states: ResourceState[] = [];
  const seen = new Set<string>();
  for (const r of a.status?.operationState?.syncResult?.resources ?? []) {
    const key = keyOf(r);
    if (seen.has(key)) continue;
    seen.add(key);
    const known = live.get(key);
    states.push({
      group: r.group,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      status: known ? known.status : r.status,
      health: known ? (known.health?.status ?? '') : '',
      hook: r.verb === 'hook' ? 'Hook' : '',
      message: r.message,
    });
    live.delete(key);
  }
  for (const key of [...live.keys()].sort()) {
    const r = live.get(key)!;
    states.push({
      group: r.group,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      status: r.status,
      health: r.health?.status ?? '',
      hook: r.hook ? 'Hook' : '',
      message: r.message,
    });
  }
  return states;
}

function operationLine(a: apiv1.Application): string {
  const op = a.status?.operationState;
  if (!op) return '<none>';
  return `${op.phase} ${op.operation?.sync?.dryRun ? '(dry run) ' : ''}${op.message}`.trimEnd();
}

/** A history entry as Argo CD writes it: `id` always (proto JSON would leave the first one's 0 out). */
function historyJson(h: apiv1.RevisionHistory): unknown {
  return { id: h.id, ...(apiv1.RevisionHistory.toJSON(h) as object) };
}

/** The Application's JSON with its history entries as Argo CD writes them. */
function applicationJson(a: apiv1.Application): unknown {
  const json = apiv1.Application.toJSON(a) as { status?: { history?: unknown[] } };
  if (json.status?.history) json.status.history = (a.status?.history ?? []).map(historyJson);
  return json;
}

/** `capstan app get`: Argo's summary, conditions and resource table (or json/yaml of the Application). */
export function printApplication(o: OutputFormat, a: apiv1.Application, syncWindow?: string): void {
  const op = a.status?.operationState;
  printObject(o, applicationJson(a), [
    ['Name', `${a.metadata?.namespace}/${a.metadata?.name}`],
    ['Project', a.spec?.project],
    ['Server', a.spec?.destination?.server || a.spec?.destination?.name],
    ['Namespace', a.spec?.destination?.namespace],
    ...sourceRows(a),
    ['Managed By', managedBy(a.metadata?.annotations)],
    ...(syncWindow === undefined ? [] : ([['SyncWindow', syncWindow]] as [string, string][])),
    ['Sync Policy', syncPolicyLine(a)],
    ['Sync Status', syncStatusLine(a)],
    ['Health Status', a.status?.health?.status || 'Unknown'],
    ...deletionRows(a),
    ['Last Operation', operationLine(a)],
    ['Synced As', op ? op.identity || 'control-plane credentials' : ''],
  ]);
  if (o !== 'table' && o !== 'wide') return;
  const conditions = a.status?.conditions ?? [];
  if (conditions.length > 0) {
    process.stdout.write('\n');
    printList(
      o,
      conditions,
      [
        ['CONDITION', (c) => c.type],
        ['MESSAGE', (c) => c.message],
        ['LAST TRANSITION', (c) => c.lastTransitionTime],
      ],
      (c) => c,
      (c) => c.type,
    );
  }
  const states = resourceStates(a);
  if (states.length > 0) {
    process.stdout.write('\n');
    printList(
      o,
      states,
      [
        ['GROUP', (r) => r.group],
        ['KIND', (r) => r.kind],
        ['NAMESPACE', (r) => r.namespace],
        ['NAME', (r) => r.name],
        ['STATUS', (r) => r.status],
        ['HEALTH', (r) => r.health],
        ['HOOK', (r) => r.hook],
        ['MESSAGE', (r) => r.message],
      ],
      (r) => r,
      (r) => r.name,
    );
  }
}

/** Repo, Target and Path of the source, or one Source row per source of a multi-source Application. */
function sourceRows(a: apiv1.Application): [string, string | undefined][] {
  const sources = a.spec?.sources ?? [];
  if (sources.length === 0)
    return [
      ['Repo', a.spec?.source?.repoUrl],
      ['Target', a.spec?.source?.targetRevision || 'HEAD'],
      ['Path', a.spec?.source?.path],
    ];
  return sources.map((s, i) => [
    `Source ${i + 1}`,
    [s.repoUrl, s.path && `path ${s.path}`, s.targetRevision || 'HEAD', s.ref && `ref ${s.ref}`]
      .filter(Boolean)
      .join('  '),
  ]);
}

/** While a cascade deletion runs: since when and with which finalizer. */
function deletionRows(a: apiv1.Application): [string, string][] {
  const since = a.metadata?.deletionTimestamp;
  return since ? [['State', `Deleting since ${since} (${a.metadata?.finalizers.join(', ') ?? ''})`]] : [];
}

/** Argo's REVISION column: the source's target with the first seven characters of the commit. */
function revisionCell(h: apiv1.RevisionHistory): string {
  if (h.sources.length > 0)
    return h.sources
      .map((s, i) => `${s.targetRevision || 'HEAD'} (${(h.revisions[i] ?? '').slice(0, 7)})`)
      .join(', ');
  const target = h.source?.targetRevision ?? '';
  return h.revision.length >= 7 ? `${target} (${h.revision.slice(0, 7)})`.trim() : target || h.revision;
}

export function initiatorCell(h: { initiatedBy?: apiv1.OperationInitiator | undefined }): string {
  return h.initiatedBy?.automated ? 'automated' : h.initiatedBy?.username || '';
}

/** `capstan app history`: status.history grouped by repository as Argo prints it (or json/yaml). */
export function printRevisionHistory(o: OutputFormat, history: readonly apiv1.RevisionHistory[]): void {
  if (printJsonOrYaml(o, history.map(historyJson))) return;
  if (o === 'name') {
    for (const h of history) process.stdout.write(`${h.id}\n`);
    return;
  }
  const byRepo = new Map<string, apiv1.RevisionHistory[]>();
  for (const h of history) {
    const repo = h.source?.repoUrl ?? h.sources.map((s) => s.repoUrl).join(', ');
    byRepo.set(repo, [...(byRepo.get(repo) ?? []), h]);
  }
  let first = true;
  for (const [repo, entries] of byRepo) {
    if (!first) process.stdout.write('\n');
    first = false;
    process.stdout.write(`SOURCE  ${repo}\n`);
    printList(
      o,
      entries,
      [
        ['ID', (h) => h.id],
        ['DATE', (h) => h.deployedAt],
        ['REVISION', revisionCell],
        ['INITIATED-BY', initiatorCell],
        ['TRIGGER', (h) => h.trigger],
      ],
      (h) => h,
      (h) => String(h.id),
    );
  }
}

/** `capstan app history --operations`: every operation, any outcome and trigger, newest first. */
export function printOperations(o: OutputFormat, items: readonly apiv1.SyncOperation[]): void {
  printList(
    o,
    [...items],
    [
      ['ID', (h) => h.id],
      ['STARTED', (h) => h.startedAt],
      ['PHASE', (h) => `${h.phase}${h.dryRun ? ' (dry run)' : ''}`],
      ['REVISION', (h) => h.revision || h.revisions.join(',')],
      ['TRIGGER', (h) => h.trigger],
      ['AS', (h) => h.identity],
      ['BY', (h) => h.initiatedBy],
      ['MESSAGE', (h) => h.message],
    ],
    (h) => apiv1.SyncOperation.toJSON(h),
    (h) => h.id,
  );
}

/**
 * Argo's findRevisionHistory of `argocd app rollback`: the given id, or without one the deployment
 * before the last (at least two are needed).
 */
export function rollbackTarget(
  name: string,
  history: readonly apiv1.RevisionHistory[],
  id: number | undefined,
): apiv1.RevisionHistory {
  if (id === undefined) {
    if (history.length < 2)
      throw new CliError(`application '${name}' should have at least two successful deployments`);
    return history[history.length - 2]!;
  }
  const found = history.find((h) => h.id === id);
  if (!found) throw new CliError(`application '${name}' does not have deployment id '${id}' in history`);
  return found;
}
