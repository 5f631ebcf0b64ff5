// The files a -f flag names, for every command that reads manifests (apply, sync explain): a file,
// `-` for stdin, or a directory's *.yaml, *.yml and *.json in name order (its subdirectories only
// when recursive). Unreadable paths fail with exit status 1, naming the path and the reason. YAML is
// read by @capstan/policy's bounded reader, the same one the api applies to tenant YAML.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssues, ManifestError, readYamlDocuments } from '@capstan/policy';
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

/** The one object of a -f file (`app create -f`, `proj create -f`); invalid YAML exits with status 2. */
export function readManifestObject(file: string): unknown {
  const origin = file === '-' ? '<stdin>' : file;
  let docs;
  try {
    docs = readYamlDocuments(readManifestFile(file), origin).filter((d) => d.issues || d.value != null);
  } catch (err) {
    if (err instanceof ManifestError) throw new CliError(err.message, 2);
    throw err;
  }
  const [first, ...rest] = docs;
  if (!first || rest.length > 0) throw new CliError(`${origin}: expected exactly one document`, 2);
  if (first.issues) throw new CliError(`${origin}: ${formatIssues(first.issues)}`, 2);
  return first.value;
}
