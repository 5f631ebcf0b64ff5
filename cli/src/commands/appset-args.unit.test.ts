// Argument parsing of `capstan appset`: argocd's flag names and output choices. Each command is parsed
// by the real command tree; its action then stops at the connection (no contexts file, no server), which
// shows that parsing succeeded and what it produced.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../program.js';

const noContexts = join(mkdtempSync(join(tmpdir(), 'capstan-appset-args-')), 'config');

function quiet(cmd: Command): void {
  cmd.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  cmd.commands.forEach(quiet);
}

/** Parses `capstan appset <args>`; returns the leaf command and the error its action (or parsing) threw. */
async function parse(
  ...args: string[]
): Promise<{ opts: Record<string, unknown>; args: string[]; error: unknown }> {
  const program = buildProgram();
  quiet(program);
  let error: unknown;
  try {
    await program.parseAsync(['--config', noContexts, 'appset', ...args], { from: 'user' });
  } catch (err) {
    error = err;
  }
  const appset = program.commands.find((c) => c.name() === 'appset')!;
  const leaf = appset.commands.find((c) => c.name() === args[0])!;
  return { opts: leaf.opts(), args: leaf.args, error };
}

const noServer = (error: unknown) => expect((error as Error).message).toMatch(/^no server/);

beforeEach(() => vi.stubEnv('CAPSTAN_SERVER', ''));
afterEach(() => vi.unstubAllEnvs());

describe('capstan appset arguments', () => {
  it('has the argocd subcommands and apply', () => {
    const appset = buildProgram().commands.find((c) => c.name() === 'appset')!;
    expect(appset.commands.map((c) => c.name())).toEqual([
      'create',
      'apply',
      'get',
      'list',
      'delete',
      'generate',
    ]);
  });

  it("list: -p/--project (repeatable), -l/--selector, -N/--appset-namespace, -o (argocd's default wide)", async () => {
    const r = await parse(
      'list',
      '-p',
      'team-a',
      '--project',
      'team-b',
      '-l',
      'env=prod',
      '-N',
      'tenants',
      '-o',
      'name',
    );
    noServer(r.error);
    expect(r.opts).toEqual({
      project: ['team-a', 'team-b'],
      selector: 'env=prod',
      appsetNamespace: 'tenants',
      output: 'name',
    });
    expect((await parse('list')).opts).toEqual({
      project: [],
      selector: '',
      appsetNamespace: '',
      output: 'wide',
    });
  });

  it('get: a name, --appset-namespace, -o json|yaml|wide only', async () => {
    const r = await parse('get', 'guestbook', '--appset-namespace', 'team-a', '-o', 'yaml');
    noServer(r.error);
    expect(r.args).toEqual(['guestbook']);
    expect(r.opts).toEqual({ appsetNamespace: 'team-a', output: 'yaml' });
    const bad = await parse('get', 'guestbook', '-o', 'name');
    expect(bad.error).toBeInstanceOf(CommanderError);
    expect((bad.error as CommanderError).code).toBe('commander.invalidArgument');
    expect((await parse('get')).error).toMatchObject({ code: 'commander.missingArgument' });
  });

  it('create: several files, --upsert, --dry-run, -o; files are read before connecting', async () => {
    const r = await parse('create', 'a.yaml', 'b.yaml', '--upsert', '--dry-run', '-o', 'json');
    expect(r.args).toEqual(['a.yaml', 'b.yaml']);
    expect(r.opts).toEqual({ upsert: true, dryRun: true, output: 'json' });
    expect((r.error as Error).message).toBe('cannot read a.yaml: ENOENT');
    expect((await parse('create')).error).toMatchObject({ code: 'commander.missingArgument' });
  });

  it('delete: several names, -y/--yes, -N', async () => {
    const r = await parse('delete', 'a', 'team-b/b', '-y', '-N', 'team-a');
    noServer(r.error);
    expect(r.args).toEqual(['a', 'team-b/b']);
    expect(r.opts).toEqual({ yes: true, appsetNamespace: 'team-a' });
  });

  it('generate: one file, --offline, -o without a default (wide online, json offline)', async () => {
    const r = await parse('generate', 'set.yaml', '-o', 'yaml');
    expect(r.opts).toEqual({ output: 'yaml' });
    expect((await parse('generate', 'set.yaml', '--offline')).opts).toEqual({ offline: true });
    expect((await parse('generate', 'a.yaml', 'b.yaml')).error).toMatchObject({
      code: 'commander.excessArguments',
    });
  });

  it('apply: several files and --dry-run', async () => {
    const r = await parse('apply', 'a.yaml', 'dir/', '--dry-run');
    expect(r.args).toEqual(['a.yaml', 'dir/']);
    expect(r.opts).toEqual({ dryRun: true });
  });
});

describe('capstan completion', () => {
  it('completes the appset subcommands (the script is derived from the command tree)', async () => {
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    await buildProgram().parseAsync(['completion', 'bash'], { from: 'user' });
    vi.restoreAllMocks();
    expect(out).toContain('"appset") opts="create apply get list delete generate" ;;');
  });
});
