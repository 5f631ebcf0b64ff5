// Plain directories of YAML/JSON manifests, as Argo CD's `source.directory`: top level only unless
// `recurse`, filtered by `include`/`exclude` globs matched against the path relative to the
// Application's directory exactly as Argo CD matches them (gobwas without separators: `*` crosses `/`,
// brace lists like `{a.yaml,b/*}` work). The patterns are the tenant's: they go through the project's
// one linear-time glob engine, never a backtracking regular expression. Files are read in path order;
// *.jsonnet files are evaluated (jsonnet-source.ts).
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { compileGlob, GlobSyntaxError } from '@capstan/glob';
import { parseManifests, type KubeObject } from './manifest-documents.js';
import type { DirectorySource } from '@capstan/policy';
import { evaluateJsonnet, type JsonnetRunner } from './jsonnet-source.js';
import { ManifestRenderError, PathEscapeError, ToolUnavailableError } from './manifest-errors.js';
import { isInside } from './repo-path.js';

export interface DirectoryOptions {
  recurse: boolean;
  include: string;
  exclude: string;
}

const MANIFEST_FILE = /\.(ya?ml|json|jsonnet)$/i;

export function globMatcher(pattern: string, field = 'directory'): (relPath: string) => boolean {
  const trimmed = pattern.trim();
  if (trimmed === '') return () => false;
  try {
    const glob = compileGlob(trimmed);
    return (relPath) => glob.match(relPath);
  } catch (err) {
    if (err instanceof GlobSyntaxError)
      throw new ManifestRenderError(`${field}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** Lists manifest files under `appDir` (repository-relative to `root`) honouring the options. */
export async function listManifestFiles(
  root: string,
  appDir: string,
  options: DirectoryOptions,
): Promise<string[]> {
  const include = options.include.trim() ? globMatcher(options.include, 'directory.include') : () => true;
  const exclude = globMatcher(options.exclude, 'directory.exclude');
  const files: string[] = [];
  const seen = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    const real = await realpath(dir);
    if (seen.has(real)) return;
    seen.add(real);
    for (const name of (await readdir(dir)).sort()) {
      if (name === '.git') continue;
      const full = path.join(dir, name);
      const info = await lstat(full);
      let isDir = info.isDirectory();
      if (info.isSymbolicLink()) {
        const target = await realpath(full).catch(() => null);
        if (target === null) continue;
        if (!isInside(root, target))
          throw new PathEscapeError(`${path.relative(root, full)} links outside the repository`);
        isDir = (await lstat(target)).isDirectory();
      }
      const rel = path.relative(appDir, full);
      if (isDir) {
        if (options.recurse) await walk(full);
        continue;
      }
      if (!MANIFEST_FILE.test(name) || !include(rel) || exclude(rel)) continue;
      files.push(full);
    }
  };
  await walk(appDir);
  return files;
}

export async function renderDirectory(
  root: string,
  appDir: string,
  options: DirectoryOptions,
  jsonnet?: { runner: JsonnetRunner; options: DirectorySource['jsonnet']; what: string },
): Promise<KubeObject[]> {
  const files = await listManifestFiles(root, appDir, options);
  const isJsonnet = (f: string) => f.toLowerCase().endsWith('.jsonnet');
  if (files.some(isJsonnet) && !jsonnet?.runner.binary)
    throw new ToolUnavailableError(
      `${jsonnet?.what ?? path.relative(root, appDir)} holds jsonnet files, but jsonnet is not configured on this repo service`,
    );
  const texts: string[] = [];
  // One at a time: each jsonnet evaluation is a process with its own time limit.
  for (const f of files) {
    texts.push(
      isJsonnet(f) && jsonnet
        ? await evaluateJsonnet({
            runner: jsonnet.runner,
            root,
            appDir,
            file: f,
            jsonnet: jsonnet.options ?? {},
            what: jsonnet.what,
          })
        : await readFile(f, 'utf8'),
    );
  }
  return files.flatMap((file, i) => {
    const rel = path.relative(root, file);
    const json = /\.(json|jsonnet)$/i.test(file);
    return parseManifests(texts[i] as string, rel, json ? 'json' : 'yaml');
  });
}
