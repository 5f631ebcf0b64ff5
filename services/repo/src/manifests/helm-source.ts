// Helm charts (when a helm binary is configured): `helm template` of the chart directory with
// Argo CD's spec.source.helm options, assembled as Argo CD's helm wrapper does (util/helm/cmd.go):
// --set, --set-string, --set-file, the value files, then the inline values, --api-versions,
// --include-crds unless skipCrds. The inline values (values / valuesObject) may hold secrets:
// they are written to a 0600 file in a fresh 0700 scratch directory removed after the run, never
// put on the command line. Helm's cache/config/data homes point at scratch space so no user
// configuration or repository credentials are picked up. Every file an option names is resolved
// inside the repository (sourceFileProblem from @capstan/policy, then the real path on disk).
import { access, mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { helmValuesText, refFileProblem, sourceFileProblem, type HelmSource } from '@capstan/policy';
import { parseManifests, type KubeObject } from './manifest-documents.js';
import { ManifestRenderError, PathEscapeError } from './manifest-errors.js';
import { isInside } from './repo-path.js';
import { runRenderTool } from './render-tool.js';

/** Argo CD's options plus the defaults the caller applied (release name, namespace). */
export type HelmOptions = HelmSource;

export async function isHelmChart(appDir: string): Promise<boolean> {
  return access(path.join(appDir, 'Chart.yaml')).then(
    () => true,
    () => false,
  );
}

/** Argo CD's cleanSetParameters: commas are escaped unless the value is a `{a,b}` list. */
export function cleanSetValue(value: string): string {
  if (value.startsWith('{') && value.endsWith('}')) return value;
  let out = '';
  let prev = '';
  for (const ch of value) {
    out += ch === ',' && prev !== '\\' ? '\\,' : ch;
    prev = ch;
  }
  return out;
}

/** A value file or `--set-file` file at most this large: helm reads it whole into memory. */
export const MAX_HELM_FILE_BYTES = 4 * 1024 * 1024;

/** The checkout of a ref source (Argo CD's multiple sources), for its `$name/path` files. */
export interface RefCheckout {
  root: string;
  what: string;
}

interface RepoFiles {
  root: string;
  appPath: string;
  what: string;
  /** The Application's ref sources by name: present for a multi-source Application. */
  refs?: ReadonlyMap<string, RefCheckout>;
}

/**
 * The file's absolute path, or null when it does not exist: inside the repository, or for a
 * `$name/path` file of a multi-source Application inside the ref source's checkout (resolved from
 * its root, as Argo CD does), symbolic links followed and checked again, and never larger than
 * MAX_HELM_FILE_BYTES.
 */
async function repoFile(repo: RepoFiles, file: string, field: string): Promise<string | null> {
  const refs = repo.refs ? { refs: new Set(repo.refs.keys()) } : undefined;
  const ref = refFileProblem(file, refs);
  const r = ref ?? sourceFileProblem(repo.appPath, file);
  if (r.problem !== undefined) throw new PathEscapeError(`${repo.what}: ${field} ${file}: ${r.problem}`);
  const checkout = ref && ref.problem === undefined ? repo.refs?.get(ref.ref) : undefined;
  const root = checkout?.root ?? repo.root;
  const real = await realpath(path.join(root, r.file)).catch(() => null);
  if (real === null) return null;
  if (!isInside(root, real))
    throw new PathEscapeError(
      `${repo.what}: ${field} ${file} resolved to outside ${checkout ? `the ${checkout.what}` : 'repository root'}`,
    );
  const info = await stat(real);
  if (!info.isFile()) throw new ManifestRenderError(`${repo.what}: ${field} ${file} is not a file`);
  if (info.size > MAX_HELM_FILE_BYTES)
    throw new ManifestRenderError(
      `${repo.what}: ${field} ${file} is larger than ${MAX_HELM_FILE_BYTES} bytes`,
    );
  return real;
}

/** The arguments of `helm template` for the options (the inline values file given). */
export async function helmArgs(
  repo: RepoFiles,
  options: HelmOptions,
  valuesFile: string | null,
): Promise<string[]> {
  const args = ['template', options.releaseName || 'release', '.'];
  if (options.namespace) args.push(`--namespace=${options.namespace}`);
  if (options.kubeVersion) args.push(`--kube-version=${options.kubeVersion}`);
  const set = new Map<string, string>();
  const setString = new Map<string, string>();
  for (const p of options.parameters ?? []) (p.forceString ? setString : set).set(p.name, p.value ?? '');
  for (const [k, v] of set) args.push(`--set=${k}=${cleanSetValue(v)}`);
  for (const [k, v] of setString) args.push(`--set-string=${k}=${cleanSetValue(v)}`);
  for (const p of options.fileParameters ?? []) {
    const file = await repoFile(repo, p.path, 'file parameter');
    if (file === null) throw new ManifestRenderError(`${repo.what}: file parameter ${p.path} not found`);
    args.push(`--set-file=${p.name}=${cleanSetValue(file)}`);
  }
  for (const f of options.valueFiles ?? []) {
    const file = await repoFile(repo, f, 'value file');
    if (file === null) {
      if (options.ignoreMissingValueFiles) continue;
      throw new ManifestRenderError(
        `${repo.what}: value file ${f} not found (ignoreMissingValueFiles is off)`,
      );
    }
    args.push(`--values=${file}`);
  }
  if (valuesFile) args.push(`--values=${valuesFile}`);
  for (const v of options.apiVersions ?? []) args.push(`--api-versions=${v}`);
  if (!options.skipCrds) args.push('--include-crds');
  if (options.skipSchemaValidation) args.push('--skip-schema-validation');
  if (options.skipTests) args.push('--skip-tests');
  return args;
}

export async function renderHelm(opts: {
  helm: string;
  root: string;
  appDir: string;
  options: HelmOptions;
  scratchHome: string;
  timeoutMs: number;
  what: string;
  refs?: ReadonlyMap<string, RefCheckout>;
}): Promise<KubeObject[]> {
  const repo: RepoFiles = {
    root: opts.root,
    appPath: path.relative(opts.root, opts.appDir) || '.',
    what: opts.what,
    ...(opts.refs ? { refs: opts.refs } : {}),
  };
  const scratch = await mkdtemp(path.join(opts.scratchHome, 'helm-values-'));
  try {
    const values = helmValuesText(opts.options);
    let valuesFile: string | null = null;
    if (values.trim() !== '') {
      valuesFile = path.join(scratch, 'values.yaml');
      await writeFile(valuesFile, values, { mode: 0o600 });
    }
    const args = await helmArgs(repo, opts.options, valuesFile);
    const out = await runRenderTool({
      command: opts.helm,
      args,
      cwd: opts.appDir,
      env: {
        HOME: opts.scratchHome,
        HELM_CACHE_HOME: path.join(opts.scratchHome, 'helm-cache'),
        HELM_CONFIG_HOME: path.join(opts.scratchHome, 'helm-config'),
        HELM_DATA_HOME: path.join(opts.scratchHome, 'helm-data'),
      },
      timeoutMs: opts.timeoutMs,
      what: opts.what,
    }).catch((err: unknown) => {
      // The scratch file's path says nothing to the tenant: name the field instead.
      if (valuesFile && err instanceof ManifestRenderError && err.message.includes(scratch))
        throw new ManifestRenderError(err.message.split(valuesFile).join('spec.source.helm.values'));
      throw err;
    });
    return parseManifests(out, `${opts.what} (helm output)`, 'yaml');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
