// Jsonnet files of a directory application (Argo CD's spec.source.directory.jsonnet): each
// *.jsonnet file is evaluated by capstan-jsonnet (go-jsonnet, the implementation Argo CD links,
// built by test/scripts/obtain-jsonnet.sh) whose importer is confined to the repository. Library
// paths are relative to the repository root and the application's directory is searched first,
// as in Argo CD. External variables and top-level arguments go through a 0600 file in a fresh
// 0700 scratch directory, never the command line. The output is an object, an array or a List.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sourceFileProblem, type DirectorySource } from '@capstan/policy';
import { PathEscapeError } from './manifest-errors.js';
import { runRenderTool } from './render-tool.js';

export interface JsonnetRunner {
  /** capstan-jsonnet, or null when jsonnet is not configured on this installation. */
  binary: string | null;
  scratchHome: string;
  timeoutMs: number;
}

/** The JSON text the file evaluates to. */
export async function evaluateJsonnet(opts: {
  runner: JsonnetRunner;
  root: string;
  appDir: string;
  file: string;
  jsonnet: NonNullable<DirectorySource['jsonnet']>;
  what: string;
}): Promise<string> {
  const { runner } = opts;
  if (!runner.binary) throw new Error('jsonnet is not configured');
  const libs = ['-J', opts.appDir];
  for (const lib of opts.jsonnet.libs ?? []) {
    const r = sourceFileProblem('.', lib);
    if (r.problem !== undefined)
      throw new PathEscapeError(`${opts.what}: jsonnet library ${lib}: ${r.problem}`);
    libs.push('-J', path.join(opts.root, r.file));
  }
  const scratch = await mkdtemp(path.join(runner.scratchHome, 'jsonnet-'));
  try {
    const vars = path.join(scratch, 'vars.json');
    await writeFile(
      vars,
      JSON.stringify({ extVars: opts.jsonnet.extVars ?? [], tlas: opts.jsonnet.tlas ?? [] }),
      {
        mode: 0o600,
      },
    );
    return await runRenderTool({
      command: runner.binary,
      args: ['--root', opts.root, '--file', opts.file, '--vars', vars, ...libs],
      cwd: opts.appDir,
      env: { HOME: runner.scratchHome },
      timeoutMs: runner.timeoutMs,
      what: `${opts.what}: ${path.relative(opts.root, opts.file)}`,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
