// The files a -f flag names, for every command that reads manifests (apply, sync explain, appset): a file,
// `-` for stdin, or a directory's *.yaml, *.yml and *.json in name order (its subdirectories only
// when recursive). Unreadable paths fail with exit status 1, naming the path and the reason. YAML is
// read by @capstan/policy's bounded reader, the same one the api applies to tenant YAML.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssues, ManifestError, readYamlDocuments, type YamlDocument } from '@capstan/policy';
import { CliError } from '../errors.js';

const MANIFEST = /\.(ya?ml|json)$/;

function cannotRead(path: string, err: unknown): CliError {
  return new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, 1);
}

export function manifestFiles(paths: readonly string[], recursive = false): string[] {
  const files: string[] = [];
  const visit = (path: string, named: boolean): void => {
    if (path === '-') {
      files.push(path);
      return;
    }
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      throw cannotRead(path, err);
    }
    if (!isDir) {
      // A file named on the command line is read whatever its extension.
      if (named || MANIFEST.test(path)) files.push(path);
      return;
    }
    if (!named && !recursive) return;
    for (const name of readdirSync(path).sort()) visit(join(path, name), false);
  };
  for (const p of paths) visit(p, true);
  return files;
}

/** The text of one of manifestFiles' entries (`-` is stdin). */
export function readManifestFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw cannotRead(file, err);
  }
}

/** Where a document came from, as errors name it: `<stdin>` for `-`. */
export const originOf = (file: string): string => (file === '-' ? '<stdin>' : file);

/** The non-empty documents of a file, through the shared bounded reader; invalid YAML exits with status 2. */
function documentsOf(file: string): YamlDocument[] {
  try {
    return readYamlDocuments(readManifestFile(file), originOf(file)).filter(
      (d) => d.issues || d.value != null,
    );
  } catch (err) {
    if (err instanceof ManifestError) throw new CliError(err.message, 2);
    throw err;
  }
}

/** The one object of a -f file (`app create -f`, `proj create -f`); invalid YAML exits with status 2. */
export function readManifestObject(file: string): unknown {
  const origin = originOf(file);
  const [first, ...rest] = documentsOf(file);
  if (!first || rest.length > 0) throw new CliError(`${origin}: expected exactly one document`, 2);
  if (first.issues) throw new CliError(`${origin}: ${formatIssues(first.issues)}`, 2);
  return first.value;
}

/** One document of a manifest file; `index` counts from 1 among the file's documents. */
export interface ManifestDocument {
  readonly origin: string;
  readonly index: number;
  readonly value: unknown;
}

/** How errors name a document: `sets.yaml (document 2)`. */
export const documentName = (d: Pick<ManifestDocument, 'origin' | 'index'>): string =>
  `${d.origin} (document ${d.index})`;

/**
 * Every non-empty document of the files (`manifestFiles`' rules), in order. Nothing is returned when
 * any document is unreadable: the error (exit status 2) names its file and document.
 */
export function readManifestDocuments(paths: readonly string[]): ManifestDocument[] {
  const out: ManifestDocument[] = [];
  for (const file of manifestFiles(paths)) {
    const origin = originOf(file);
    for (const d of documentsOf(file)) {
      if (d.issues)
        throw new CliError(`${documentName({ origin, index: d.index })}: ${formatIssues(d.issues)}`, 2);
      out.push({ origin, index: d.index, value: d.value });
    }
  }
  return out;
}
