// Kustomize applications: `kustomize build` of the application directory. Kustomize's own load
// restrictor keeps file references inside the kustomization root; exec plugins and Helm inflation
// stay off (their defaults) unless the operator's kustomize.build-options turn them on.
//
// Argo CD's spec.source.kustomize options are applied as Argo CD applies them: `kustomize edit`
// on the application's kustomization (set nameprefix/namesuffix/image/replicas/namespace, add
// label/annotation/component) and the patches appended to its `patches`. Checked-out trees are
// shared and never written, so the edits happen on a scratch copy of the repository: a tree of
// hard links (a copy where linking is impossible) in a fresh 0700 directory, in which only the
// kustomization file is replaced by a file of its own before kustomize edits it. Paths the options
// name (components, patch files) resolve inside that copy of the repository, so nothing reaches
// beyond it; the copy is removed after the build.
import {
  access,
  copyFile,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { readYamlDocuments, sourceFileProblem, type KustomizeSource } from '@capstan/policy';
import { parseManifests, type KubeObject } from './manifest-documents.js';
import { ManifestRenderError, PathEscapeError } from './manifest-errors.js';
import { runRenderTool } from './render-tool.js';

export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

async function kustomizationFile(appDir: string): Promise<string | null> {
  for (const name of KUSTOMIZATION_FILES) if (await exists(path.join(appDir, name))) return name;
  return null;
}

export async function isKustomization(appDir: string): Promise<boolean> {
  return (await kustomizationFile(appDir)) !== null;
}

/** Whether any option changes the build (an empty object renders the directory as it is). */
export function hasEdits(k: KustomizeSource): boolean {
  return Object.entries(k).some(
    ([key, v]) => !['version', 'kubeVersion', 'apiVersions'].includes(key) && v !== undefined && v !== false,
  );
}

/** A copy of `from` at `to` made of hard links (symbolic links recreated, files copied across devices). */
export async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  for (const name of await readdir(from)) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    const info = await lstat(src);
    if (info.isDirectory()) await linkTree(src, dst);
    else if (info.isSymbolicLink()) await symlink(await readlink(src), dst);
    else if (info.isFile()) await link(src, dst).catch(() => copyFile(src, dst));
  }
}

/** The `kustomize edit` runs for the options, in Argo CD's order (util/kustomize/kustomize.go). */
export function editCommands(k: KustomizeSource): string[][] {
  const runs: string[][] = [];
  if (k.namePrefix) runs.push(['edit', 'set', 'nameprefix', '--', k.namePrefix]);
  if (k.nameSuffix) runs.push(['edit', 'set', 'namesuffix', '--', k.nameSuffix]);
  if (k.images?.length) runs.push(['edit', 'set', 'image', ...k.images]);
  if (k.replicas?.length)
    runs.push(['edit', 'set', 'replicas', ...k.replicas.map((r) => `${r.name}=${Number(r.count)}`)]);
  const pairs = (m: Record<string, string>) => Object.entries(m).map(([key, v]) => `${key}:${v}`);
  if (k.commonLabels && Object.keys(k.commonLabels).length > 0)
    runs.push([
      'edit',
      'add',
      'label',
      ...(k.forceCommonLabels ? ['--force'] : []),
      ...(k.labelWithoutSelector ? ['--without-selector'] : []),
      ...(k.labelIncludeTemplates ? ['--include-templates'] : []),
      ...pairs(k.commonLabels),
    ]);
  if (k.commonAnnotations && Object.keys(k.commonAnnotations).length > 0)
    runs.push([
      'edit',
      'add',
      'annotation',
      ...(k.forceCommonAnnotations ? ['--force'] : []),
      ...pairs(k.commonAnnotations),
    ]);
  if (k.namespace) runs.push(['edit', 'set', 'namespace', '--', k.namespace]);
  return runs;
}

interface KustomizeRun {
  kustomize: string;
  root: string;
  appDir: string;
  options: KustomizeSource;
  buildOptions: readonly string[];
  scratchHome: string;
  timeoutMs: number;
  what: string;
}

async function appendPatches(file: string, k: KustomizeSource, what: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const docs = readYamlDocuments(text, `${what} (kustomization)`);
  const value = docs[0]?.value ?? {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ManifestRenderError(`${what}: the kustomization is not a mapping`);
  const kustomization = value as Record<string, unknown>;
  const existing = kustomization.patches ?? [];
  if (!Array.isArray(existing))
    throw new ManifestRenderError(`${what}: 'patches' of the kustomization is not a list`);
  kustomization.patches = [...(existing as unknown[]), ...(k.patches ?? [])];
  // JSON is YAML: kustomize reads it as it reads the original.
  await writeFile(file, JSON.stringify(kustomization, null, 2));
}

/** Components that exist in the copy (ignoreMissingComponents), each checked to stay inside it. */
async function componentsToAdd(run: KustomizeRun, copyRoot: string, appPath: string): Promise<string[]> {
  const out: string[] = [];
  for (const c of run.options.components ?? []) {
    const r = sourceFileProblem(appPath, c);
    if (r.problem !== undefined) throw new PathEscapeError(`${run.what}: component ${c}: ${r.problem}`);
    if (run.options.ignoreMissingComponents && !(await exists(path.join(copyRoot, r.file)))) continue;
    // On kustomize's command line: a name starting with "-" must not read as a flag.
    out.push(c.startsWith('-') ? `./${c}` : c);
  }
  return out;
}

async function editCopy(run: KustomizeRun, scratch: string): Promise<string> {
  const copyRoot = path.join(scratch, 'repo');
  await linkTree(run.root, copyRoot);
  const appPath = path.relative(run.root, run.appDir) || '.';
  const appCopy = path.join(copyRoot, appPath);
  const name = await kustomizationFile(appCopy);
  if (name === null) throw new ManifestRenderError(`${run.what}: kustomization file not found in the path`);
  // Its own file (not a link into the shared tree) before anything edits it.
  const file = path.join(appCopy, name);
  const content = await readFile(file);
  await unlink(file);
  await writeFile(file, content, { mode: 0o600 });
  const tool = (args: string[]) => runRenderTool({ ...toolRun(run, appCopy), args });
  for (const args of editCommands(run.options)) await tool(args);
  if (run.options.patches?.length) await appendPatches(file, run.options, run.what);
  const components = await componentsToAdd(run, copyRoot, appPath);
  if (components.length > 0) await tool(['edit', 'add', 'component', ...components]);
  return appCopy;
}

function toolRun(run: KustomizeRun, cwd: string) {
  return {
    command: run.kustomize,
    cwd,
    env: { HOME: run.scratchHome, XDG_CONFIG_HOME: run.scratchHome },
    timeoutMs: run.timeoutMs,
    what: run.what,
  };
}

export async function renderKustomize(run: KustomizeRun): Promise<KubeObject[]> {
  const build = ['build', '.', ...run.buildOptions];
  if (!hasEdits(run.options)) {
    const out = await runRenderTool({ ...toolRun(run, run.appDir), args: build });
    return parseManifests(out, `${run.what} (kustomize output)`, 'yaml');
  }
  const scratch = await mkdtemp(path.join(run.scratchHome, 'kustomize-'));
  try {
    const appCopy = await editCopy(run, scratch);
    const out = await runRenderTool({ ...toolRun(run, appCopy), args: build });
    return parseManifests(out, `${run.what} (kustomize output)`, 'yaml');
  } catch (err) {
    // Name files as the repository does, not by the scratch copy's location.
    if (err instanceof ManifestRenderError && err.message.includes(scratch))
      throw new ManifestRenderError(err.message.split(`${path.join(scratch, 'repo')}/`).join(''));
    throw err;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
