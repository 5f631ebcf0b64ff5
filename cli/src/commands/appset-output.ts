// What `capstan appset` prints, as `argocd appset` prints it: the summary of one set (Name, Project,
// Server, Namespace, Source, SyncPolicy, then the conditions table), the list's columns (NAME, PROJECT,
// SYNCPOLICY, CONDITIONS, and with wide REPO, PATH, TARGET), the generated Applications (argocd's
// application columns), plus what Argo CD does not have: the caller's RBAC verdict on each Application.
// json and yaml print the objects as Argo CD manifests (apiVersion and kind included), so
// `appset get -o yaml` can be applied again.
import { apiv1 } from '@capstan/proto';
import { printJsonOrYaml, printList, printObject, type OutputFormat } from '../output/format.js';
import { qualifiedName } from './appset-manifests.js';

type Json = Record<string, unknown>;

/** The value at a path of free-form JSON (a set's spec and status are Structs), or undefined. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

const text = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function applicationSetManifest(s: apiv1.ApplicationSet): Json {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    ...(apiv1.ApplicationSet.toJSON(s) as Json),
  };
}

/** The template's source, or its first source (Argo's GetSource). */
function templateSource(s: apiv1.ApplicationSet): unknown {
  return at(s.spec, 'template', 'spec', 'source') ?? at(s.spec, 'template', 'spec', 'sources', 0);
}

/** The template's sync policy as argocd's get shows it. */
function templateSyncPolicy(s: apiv1.ApplicationSet): string {
  const automated = at(s.spec, 'template', 'spec', 'syncPolicy', 'automated');
  if (automated === undefined || automated === null) return '<none>';
  return at(automated, 'prune') === true ? 'Automated (Prune)' : 'Automated';
}

/** The set's own policy (spec.syncPolicy): applicationsSync and preserveResourcesOnDeletion. */
export function setSyncPolicy(s: apiv1.ApplicationSet): string {
  const parts = [text(at(s.spec, 'syncPolicy', 'applicationsSync'))];
  if (at(s.spec, 'syncPolicy', 'preserveResourcesOnDeletion') === true)
    parts.push('preserveResourcesOnDeletion');
  return parts.filter(Boolean).join(',') || '<none>';
}

/** The types of the conditions whose status is True, as argocd's list shows them. */
function trueConditions(s: apiv1.ApplicationSet): string {
  const types = list(at(s.status, 'conditions'))
    .filter((c) => at(c, 'status') === 'True')
    .map((c) => text(at(c, 'type')));
  return types.join(',') || '<none>';
}

function sourceFields(source: unknown): [string, unknown][] {
  const fields: [string, unknown][] = [
    ['- Repo', text(at(source, 'repoURL'))],
    ['  Target', text(at(source, 'targetRevision'))],
  ];
  if (at(source, 'path')) fields.push(['  Path', text(at(source, 'path'))]);
  if (at(source, 'chart')) fields.push(['  Chart', text(at(source, 'chart'))]);
  if (at(source, 'ref')) fields.push(['  Ref', text(at(source, 'ref'))]);
  return fields;
}

/** argocd appset get: the summary, then the conditions table when there are conditions. */
export function printApplicationSet(format: OutputFormat, s: apiv1.ApplicationSet): void {
  const t = (...path: string[]) => text(at(s.spec, 'template', 'spec', ...path));
  const sources = at(s.spec, 'template', 'spec', 'sources');
  const multi = Array.isArray(sources) && sources.length > 0;
  printObject(format, applicationSetManifest(s), [
    ['Name', qualifiedName(s.metadata)],
    ['Project', t('project') || 'default'],
    ['Server', t('destination', 'server') || t('destination', 'name')],
    ['Namespace', t('destination', 'namespace')],
    [multi ? 'Sources' : 'Source', ''],
    ...(multi ? sources.flatMap(sourceFields) : sourceFields(templateSource(s))),
    ['SyncPolicy', templateSyncPolicy(s)],
    ['Set Policy', setSyncPolicy(s)],
  ]);
  const conditions = list(at(s.status, 'conditions'));
  if (format === 'json' || format === 'yaml' || conditions.length === 0) return;
  process.stdout.write('\n');
  printList(
    'table',
    conditions,
    [
      ['CONDITION', (c) => text(at(c, 'type'))],
      ['STATUS', (c) => text(at(c, 'status'))],
      ['MESSAGE', (c) => text(at(c, 'message'))],
      ['LAST TRANSITION', (c) => text(at(c, 'lastTransitionTime'))],
    ],
    (c) => c,
    (c) => text(at(c, 'type')),
  );
}

/** argocd appset list: NAME, PROJECT, SYNCPOLICY, CONDITIONS (table); wide adds REPO, PATH, TARGET. */
export function printApplicationSets(format: OutputFormat, sets: apiv1.ApplicationSet[]): void {
  const columns: [string, (s: apiv1.ApplicationSet) => unknown][] = [
    ['NAME', (s) => qualifiedName(s.metadata)],
    ['PROJECT', (s) => text(at(s.spec, 'template', 'spec', 'project'))],
    ['SYNCPOLICY', setSyncPolicy],
    ['CONDITIONS', trueConditions],
  ];
  if (format === 'wide')
    columns.push(
      ['REPO', (s) => text(at(templateSource(s), 'repoURL'))],
      ['PATH', (s) => text(at(templateSource(s), 'path'))],
      ['TARGET', (s) => text(at(templateSource(s), 'targetRevision'))],
    );
  printList(format, sets, columns, applicationSetManifest, (s) => qualifiedName(s.metadata));
}

const verdictText = (v: apiv1.GeneratedApplicationVerdict) => (v.allowed ? 'allowed' : 'refused');

/** A verdict as JSON with every field: ts-proto's toJSON leaves out `allowed: false`, the one that matters. */
const verdictJson = (v: apiv1.GeneratedApplicationVerdict) => ({
  name: v.name,
  namespace: v.namespace,
  project: v.project,
  action: v.action,
  allowed: v.allowed,
  reason: v.reason,
});
const verdictKey = (namespace: string, name: string) => `${namespace}/${name}`;

/** The caller's verdict on each Application (delete's deleted and preserved Applications). */
export function printVerdicts(format: OutputFormat, verdicts: apiv1.GeneratedApplicationVerdict[]): void {
  printList(
    format,
    verdicts,
    [
      ['APPLICATION', (v) => verdictKey(v.namespace, v.name)],
      ['PROJECT', (v) => v.project],
      ['ACTION', (v) => v.action],
      ['VERDICT', verdictText],
      ['REASON', (v) => v.reason],
    ],
    verdictJson,
    (v) => verdictKey(v.namespace, v.name),
  );
}

interface GeneratedRow {
  readonly app?: unknown;
  readonly verdict?: apiv1.GeneratedApplicationVerdict;
}

const appKey = (a: unknown) =>
  verdictKey(text(at(a, 'metadata', 'namespace')), text(at(a, 'metadata', 'name')));

/** Each generated Application with its verdict, then the verdicts on Applications not generated (deletes). */
function generatedRows(
  applications: unknown[],
  verdicts: apiv1.GeneratedApplicationVerdict[],
): GeneratedRow[] {
  const byKey = new Map(verdicts.map((v) => [verdictKey(v.namespace, v.name), v]));
  const rows: GeneratedRow[] = applications.map((app) => ({ app, verdict: byKey.get(appKey(app)) }));
  const generated = new Set(applications.map(appKey));
  for (const v of verdicts) if (!generated.has(verdictKey(v.namespace, v.name))) rows.push({ verdict: v });
  return rows;
}

/**
 * appset generate: the Applications as argocd's application table (NAME, CLUSTER, NAMESPACE, PROJECT;
 * wide adds REPO, PATH, TARGET) with, when the server gave them, each one's ACTION, VERDICT and REASON.
 * json and yaml print the Applications, or `{applications, verdicts}` when there are verdicts.
 */
export function printGenerated(
  format: OutputFormat,
  applications: unknown[],
  verdicts?: apiv1.GeneratedApplicationVerdict[],
): void {
  const raw = verdicts ? { applications, verdicts: verdicts.map(verdictJson) } : applications;
  if (printJsonOrYaml(format, raw)) return;
  const spec = (r: GeneratedRow, ...path: (string | number)[]) => text(at(r.app, 'spec', ...path));
  const source = (r: GeneratedRow) => at(r.app, 'spec', 'source') ?? at(r.app, 'spec', 'sources', 0);
  const columns: [string, (r: GeneratedRow) => unknown][] = [
    ['NAME', (r) => (r.app ? appKey(r.app) : verdictKey(r.verdict!.namespace, r.verdict!.name))],
    ['CLUSTER', (r) => spec(r, 'destination', 'server') || spec(r, 'destination', 'name')],
    ['NAMESPACE', (r) => spec(r, 'destination', 'namespace')],
    ['PROJECT', (r) => spec(r, 'project') || r.verdict?.project],
  ];
  if (format === 'wide')
    columns.push(
      ['REPO', (r) => text(at(source(r), 'repoURL'))],
      ['PATH', (r) => text(at(source(r), 'path'))],
      ['TARGET', (r) => text(at(source(r), 'targetRevision'))],
    );
  if (verdicts)
    columns.push(
      ['ACTION', (r) => r.verdict?.action],
      ['VERDICT', (r) => (r.verdict ? verdictText(r.verdict) : 'no verdict')],
      ['REASON', (r) => r.verdict?.reason],
    );
  const rows = verdicts ? generatedRows(applications, verdicts) : applications.map((app) => ({ app }));
  printList(
    format,
    rows,
    columns,
    (r) => r.app,
    (r) => text(at(r.app, 'metadata', 'name')),
  );
}

/** The verdicts that refuse, for the exit status of the commands that print verdicts. */
export const refused = (verdicts: apiv1.GeneratedApplicationVerdict[]) => verdicts.filter((v) => !v.allowed);
