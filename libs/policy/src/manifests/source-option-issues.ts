// The semantic rules of a source's helm/kustomize/directory options, beyond their shape
// (source-options.ts): files named by the tenant stay inside the repository, nothing is fetched from
// a URL the tenant names, and every value that reaches helm's or kustomize's command line has a
// form those tools cannot read as something else. One function for the api (write time) and the
// repo service (every render request), so both refuse the same things with the same field paths.
import path from 'node:path';
import type { PolicyIssue } from '../issues.js';
import { repoPathProblem } from '../repository/repo-path.js';
import type { DirectorySource, HelmSource, KustomizeSource } from './source-options.js';

const URL_LIKE = /^[a-z][a-z0-9+.-]*:/i;
// Helm's own release-name rule (pkg/chartutil ValidateReleaseName), at most 53 characters.
const RELEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// --kube-version: a semantic version with an optional "v" (helm and kustomize parse it so).
const KUBE_VERSION = /^v?\d{1,4}\.\d{1,4}(\.\d{1,4})?([-+][0-9A-Za-z.-]{1,64})?$/;
// --api-versions: "group/version" or "group/version/Kind" (or "v1").
const API_VERSION = /^[A-Za-z0-9][A-Za-z0-9.-]*(\/[A-Za-z0-9][A-Za-z0-9.-]*){0,2}$/;
// kustomize edit set image: name[=newName][:tag|@digest] (no spaces, no leading dash).
const IMAGE = /^[A-Za-z0-9_.][A-Za-z0-9_./:@=*+-]*$/;
// Names the kustomize version settings use (kustomize.version.<name>, kustomize.path.<name>).
const TOOL_VERSION = /^v?[0-9A-Za-z][0-9A-Za-z._-]{0,62}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/**
 * Where a file named by a source option lies in the repository (posix, relative to the root), or
 * why it cannot be read: a relative name is relative to the Application's path, an absolute one to
 * the repository root (as Argo CD resolves value files); URLs are refused (the repo service fetches
 * nothing a tenant names: a value file at `http://169.254.169.254/…` would read the network the
 * repo service sits in).
 */
export function sourceFileProblem(
  appPath: string,
  file: string,
): { file: string; problem?: undefined } | { problem: string } {
  if (file.trim() === '') return { problem: 'must not be empty' };
  if (URL_LIKE.test(file) && !file.startsWith('/'))
    return { problem: 'must be a file in the repository: remote (URL) files are not supported' };
  const joined = file.startsWith('/') ? file.slice(1) : path.posix.join(appPath || '.', file);
  const problem = repoPathProblem(joined);
  if (problem) return { problem: problem.replace('must stay inside', 'must resolve inside') };
  return { file: path.posix.normalize(joined || '.') };
}

/** Argo CD's rule for a source's `ref` name (util/argo GetRefSources). */
export const REF_NAME = /^[a-zA-Z0-9_-]+$/;

/**
 * The other sources' `ref` names a multi-source Application declares, and which of them name a
 * chart (Argo CD cannot read value files from those). Absent for a single-source Application,
 * where a `$`-prefixed file is an ordinary path, as in Argo CD.
 */
export interface RefContext {
  readonly refs: ReadonlySet<string>;
  readonly chartRefs?: ReadonlySet<string>;
}

/**
 * A `$ref/path` file of a multi-source Application (Argo CD's value files from another source): the
 * ref it names and the file's place in that source's repository (relative to its root, as Argo CD
 * resolves it), or why it cannot be read. Undefined when the name does not start with `$`.
 */
export function refFileProblem(
  file: string,
  ctx: RefContext | undefined,
): { ref: string; file: string; problem?: undefined } | { problem: string } | undefined {
  if (!ctx || !file.startsWith('$')) return undefined;
  const slash = file.indexOf('/');
  const refVar = slash < 0 ? file : file.slice(0, slash);
  const ref = refVar.slice(1);
  if (!ctx.refs.has(ref)) {
    if (ctx.refs.size === 0)
      return {
        problem: `source referenced ${JSON.stringify(refVar)}, but no source has a 'ref' field defined`,
      };
    const known = [...ctx.refs].map((r) => `$${r}`).join(', ');
    return {
      problem: `source referenced ${JSON.stringify(refVar)}, which is not one of the available sources (${known})`,
    };
  }
  if (ctx.chartRefs?.has(ref))
    return {
      problem:
        "source has a 'chart' field defined, but Helm charts are not yet not supported for 'ref' sources",
    };
  const rest = slash < 0 ? '' : file.slice(slash + 1);
  if (rest.trim() === '')
    return { problem: `must name a file of the source ${refVar} ($${ref}/path/values.yaml)` };
  const problem = repoPathProblem(rest);
  if (problem)
    return {
      problem: `${problem.replace('must stay inside', 'must resolve inside').replace('the repository', `the repository of ${refVar}`)}`,
    };
  return { ref, file: path.posix.normalize(rest) };
}

/** A file a helm option names: a `$ref/…` file of another source, or one of this source's repository. */
function helmFileProblem(appPath: string, file: string, ctx: RefContext | undefined): string | undefined {
  const ref = refFileProblem(file, ctx);
  if (ref) return ref.problem;
  return sourceFileProblem(appPath, file).problem;
}

function textIssues(value: string | undefined, at: string, out: PolicyIssue[]): void {
  if (value !== undefined && CONTROL.test(value))
    out.push({ path: at, message: 'must not contain control characters' });
}

export function helmSourceIssues(
  helm: HelmSource,
  appPath: string,
  at: string,
  refs?: RefContext,
): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  helm.valueFiles?.forEach((f, i) => {
    const problem = helmFileProblem(appPath, f, refs);
    if (problem) out.push({ path: `${at}.valueFiles[${i}]`, message: problem });
  });
  helm.fileParameters?.forEach((p, i) => {
    const problem = helmFileProblem(appPath, p.path, refs);
    if (problem) out.push({ path: `${at}.fileParameters[${i}].path`, message: problem });
    nameIssues(p.name, `${at}.fileParameters[${i}].name`, out);
  });
  helm.parameters?.forEach((p, i) => {
    nameIssues(p.name, `${at}.parameters[${i}].name`, out);
    textIssues(p.value?.replace(/[\n\t]/g, ''), `${at}.parameters[${i}].value`, out);
  });
  if (helm.releaseName && (helm.releaseName.length > 53 || !RELEASE_NAME.test(helm.releaseName)))
    out.push({
      path: `${at}.releaseName`,
      message: 'must be a valid Helm release name: lowercase DNS name of at most 53 characters',
    });
  if (helm.namespace && !DNS_LABEL.test(helm.namespace))
    out.push({ path: `${at}.namespace`, message: 'must be a Kubernetes namespace name (DNS label)' });
  if (helm.version && helm.version !== 'v3')
    out.push({ path: `${at}.version`, message: 'only "v3" is supported (as Argo CD 2.x+ supports)' });
  versionIssues(helm.kubeVersion, helm.apiVersions, at, out);
  return out;
}

/** A --set name: helm's strvals reads `,` and `=` as separators, so neither may appear. */
function nameIssues(name: string, at: string, out: PolicyIssue[]): void {
  if (/[=,\s]/.test(name) || CONTROL.test(name) || name.startsWith('-'))
    out.push({
      path: at,
      message: 'must be a Helm value path such as image.tag or list[0].name (no "=", "," or spaces)',
    });
}

function versionIssues(
  kubeVersion: string | undefined,
  apiVersions: readonly string[] | undefined,
  at: string,
  out: PolicyIssue[],
): void {
  if (kubeVersion && !KUBE_VERSION.test(kubeVersion))
    out.push({ path: `${at}.kubeVersion`, message: 'must be a Kubernetes version such as 1.31.0' });
  apiVersions?.forEach((v, i) => {
    if (!API_VERSION.test(v))
      out.push({
        path: `${at}.apiVersions[${i}]`,
        message: 'must be an API version such as apps/v1 or apps/v1/Deployment',
      });
  });
}

export function kustomizeSourceIssues(k: KustomizeSource, appPath: string, at: string): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  for (const field of ['namePrefix', 'nameSuffix'] as const) {
    const v = k[field];
    if (v !== undefined && !/^[A-Za-z0-9._-]*$/.test(v))
      out.push({ path: `${at}.${field}`, message: 'may only hold letters, digits, ".", "_" and "-"' });
  }
  k.images?.forEach((img, i) => {
    if (!IMAGE.test(img))
      out.push({
        path: `${at}.images[${i}]`,
        message: 'must be an image override such as nginx:1.27, nginx=registry/nginx:1.27 or nginx@sha256:…',
      });
  });
  if (k.namespace && !DNS_LABEL.test(k.namespace))
    out.push({ path: `${at}.namespace`, message: 'must be a Kubernetes namespace name (DNS label)' });
  for (const field of ['commonLabels', 'commonAnnotations'] as const) {
    for (const [key, value] of Object.entries(k[field] ?? {})) {
      // kustomize edit add label|annotation reads "k:v,k2:v2": a key may not hold ":" twice or ",".
      if (!/^([A-Za-z0-9][-A-Za-z0-9_.]*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key))
        out.push({
          path: `${at}.${field}.${key}`,
          message: 'must be a qualified name such as app.kubernetes.io/part-of',
        });
      else if (value.includes(',') || CONTROL.test(value) || /[\n\t]/.test(value))
        out.push({ path: `${at}.${field}.${key}`, message: 'must not contain "," or line breaks' });
    }
  }
  k.replicas?.forEach((r, i) => {
    if (!/^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(r.name))
      out.push({ path: `${at}.replicas[${i}].name`, message: 'must be a resource name' });
  });
  k.patches?.forEach((p, i) => {
    if (!p.path && !p.patch) out.push({ path: `${at}.patches[${i}]`, message: 'needs a patch or a path' });
    if (p.path) {
      const r = sourceFileProblem(appPath, p.path);
      if (r.problem) out.push({ path: `${at}.patches[${i}].path`, message: r.problem });
    }
  });
  k.components?.forEach((c, i) => {
    const r = sourceFileProblem(appPath, c);
    if (r.problem) out.push({ path: `${at}.components[${i}]`, message: r.problem });
  });
  if (k.commonAnnotationsEnvsubst)
    out.push({
      path: `${at}.commonAnnotationsEnvsubst`,
      message: 'not supported: Capstan has no build environment variables to substitute',
    });
  if (k.version && !TOOL_VERSION.test(k.version))
    out.push({ path: `${at}.version`, message: 'must be a version name such as v5.4.3' });
  versionIssues(k.kubeVersion, k.apiVersions, at, out);
  return out;
}

export function directorySourceIssues(d: DirectorySource, at: string): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  textIssues(d.include, `${at}.include`, out);
  textIssues(d.exclude, `${at}.exclude`, out);
  // Argo CD: jsonnet library paths are relative to the repository root, not the application.
  d.jsonnet?.libs?.forEach((lib, i) => {
    const r = sourceFileProblem('.', lib);
    if (r.problem) out.push({ path: `${at}.jsonnet.libs[${i}]`, message: r.problem });
  });
  for (const kind of ['extVars', 'tlas'] as const) {
    d.jsonnet?.[kind]?.forEach((v, i) => {
      if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(v.name))
        out.push({ path: `${at}.jsonnet.${kind}[${i}].name`, message: 'must be an identifier' });
    });
  }
  return out;
}

/**
 * The source options' problems; `at` is the source's path (`spec.source`, `spec.sources[1]`);
 * `refs` the ref names of a multi-source Application's sources (`$ref/…` value files).
 */
export function sourceOptionIssues(
  source: { path?: string; helm?: HelmSource; kustomize?: KustomizeSource; directory?: DirectorySource },
  at: string,
  refs?: RefContext,
): PolicyIssue[] {
  const appPath = source.path ?? '.';
  return [
    ...(source.helm ? helmSourceIssues(source.helm, appPath, `${at}.helm`, refs) : []),
    ...(source.kustomize ? kustomizeSourceIssues(source.kustomize, appPath, `${at}.kustomize`) : []),
    ...(source.directory ? directorySourceIssues(source.directory, `${at}.directory`) : []),
  ];
}

/** Argo CD's ValuesYAML: valuesObject when set (as JSON, which YAML reads), else values. */
export function helmValuesText(helm: Pick<HelmSource, 'values' | 'valuesObject'>): string {
  if (helm.valuesObject !== undefined) return JSON.stringify(helm.valuesObject);
  return helm.values ?? '';
}
