// Write-time validation, for the api (and anyone else accepting AppProjects and Applications):
// the shape of Argo CD's object plus the semantic rules, every problem as a field-path issue.
import { compileGlob, GlobSyntaxError } from '@capstan/glob';
import type { PolicyIssue } from '../issues.js';
import { issuesFromZod } from '../manifests/parse.js';
import {
  AppProjectSchema,
  ApplicationSchema,
  type AppProject,
  type Application,
  type ApplicationSource,
} from '../manifests/schemas.js';
import { repoPathProblem } from '../repository/repo-path.js';
import { REF_NAME, sourceOptionIssues, type RefContext } from '../manifests/source-option-issues.js';
import { chartRepoUrl, chartSourceIssues } from '../manifests/chart-source.js';
import { repoUrlProblem, type RepoUrlOptions } from '../repository/repo-url.js';
import { compileProject } from './compile.js';

export type Validation<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: readonly PolicyIssue[] };

/** Semantic problems of an already-decoded AppProject (globs, defaultServiceAccount, duplicates, parent). */
export function appProjectIssues(project: AppProject): readonly PolicyIssue[] {
  return compileProject(project).issues;
}

/**
 * Problems of one source: a repository URL git or ssh could read as an option or a transport
 * helper (the same rule the repo service applies before fetching), and a path that leaves the
 * repository (the same rule it applies before rendering), and the helm/kustomize/directory options'
 * rules (source-option-issues.ts).
 */
export function applicationSourceIssues(
  source: ApplicationSource,
  at: string,
  opts: RepoUrlOptions = {},
  refs?: RefContext,
): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  // A chart source may name an OCI registry; git never fetches one (chart-source.ts).
  const isChart = source.chart !== undefined;
  const url = isChart ? chartRepoUrl(source.repoURL) : source.repoURL;
  const urlProblem = repoUrlProblem(url, { ...opts, allowOci: isChart });
  if (urlProblem) issues.push({ path: `${at}.repoURL`, message: urlProblem });
  else issues.push(...chartSourceIssues(source, at));
  const pathProblem = source.path === undefined ? undefined : repoPathProblem(source.path);
  if (pathProblem) issues.push({ path: `${at}.path`, message: pathProblem });
  else issues.push(...sourceOptionIssues(source, at, refs));
  // Argo CD's ExplicitType: one tool per source.
  const tools = (['helm', 'kustomize', 'directory', 'plugin'] as const).filter(
    (t) => (source as Record<string, unknown>)[t] != null,
  );
  if (tools.length > 1)
    issues.push({ path: at, message: `multiple application sources defined: ${tools.join(',')}` });
  return issues;
}

/**
 * The rules of `spec.sources` (Argo CD's multiple sources): `ref` names as Argo CD checks them, each
 * declared once, and the names every source's `$ref/…` files may use. `source` beside `sources` is
 * refused: Argo CD silently ignores `source` then, and a field that is written but never used is
 * how a tenant deploys something other than what they read in the manifest.
 */
function multiSourceIssues(app: Application, issues: PolicyIssue[]): RefContext {
  const refs = new Set<string>();
  const chartRefs = new Set<string>();
  const sources = app.spec.sources ?? [];
  if (app.spec.source && sources.length > 0)
    issues.push({
      path: 'spec.source',
      message:
        'source and sources are both set: set one (Argo CD ignores spec.source when spec.sources is set)',
    });
  sources.forEach((s, i) => {
    if (s.ref === undefined) return;
    const at = `spec.sources[${i}].ref`;
    if (!REF_NAME.test(s.ref))
      issues.push({
        path: at,
        message: `sources.ref ${s.ref} cannot contain any special characters except '_' and '-'`,
      });
    else if (refs.has(s.ref))
      issues.push({ path: at, message: 'invalid sources: multiple sources had the same `ref` key' });
    refs.add(s.ref);
    if (s.chart) chartRefs.add(s.ref);
  });
  return { refs, chartRefs };
}

/** Semantic problems of an already-decoded Application. */
export function applicationIssues(app: Application, opts: RepoUrlOptions = {}): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  if (app.spec.source) issues.push(...applicationSourceIssues(app.spec.source, 'spec.source', opts));
  const refs = multiSourceIssues(app, issues);
  app.spec.sources?.forEach((s, i) =>
    issues.push(...applicationSourceIssues(s, `spec.sources[${i}]`, opts, refs)),
  );
  const { destination, source, sources, sourceHydrator, allowedParentProjects } = app.spec;
  if (destination.server && destination.name) {
    issues.push({
      path: 'spec.destination',
      message: 'server and name are both set; name the cluster by one of them',
    });
  } else if (!destination.server && !destination.name) {
    issues.push({ path: 'spec.destination', message: 'server or name is required' });
  }
  if (!source && (!sources || sources.length === 0) && !sourceHydrator) {
    issues.push({ path: 'spec.source', message: 'source or sources is required' });
  }
  allowedParentProjects?.forEach((pattern, i) => {
    try {
      compileGlob(pattern);
    } catch (err) {
      if (!(err instanceof GlobSyntaxError)) throw err;
      issues.push({
        path: `spec.allowedParentProjects[${i}]`,
        message: `invalid glob ${JSON.stringify(pattern)}: ${err.detail}`,
      });
    }
  });
  return issues;
}

export function validateAppProject(input: unknown): Validation<AppProject> {
  const parsed = AppProjectSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: issuesFromZod(parsed.error) };
  const issues = appProjectIssues(parsed.data);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: parsed.data };
}

export function validateApplication(input: unknown, opts: RepoUrlOptions = {}): Validation<Application> {
  const parsed = ApplicationSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: issuesFromZod(parsed.error) };
  const issues = applicationIssues(parsed.data, opts);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: parsed.data };
}
