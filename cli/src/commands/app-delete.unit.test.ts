// Argument parsing of `capstan app delete` (argocd app delete's flags). The real command tree parses;
// the action then stops at the connection (no contexts file, no server), which shows what it parsed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../program.js';

const noContexts = join(mkdtempSync(join(tmpdir(), 'capstan-app-delete-')), 'config');

function quiet(cmd: Command): void {
  cmd.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  cmd.commands.forEach(quiet);
}

async function parse(...args: string[]): Promise<{ opts: Record<string, unknown>; error: unknown }> {
  const program = buildProgram();
  quiet(program);
  let error: unknown;
  try {
    await program.parseAsync(['--config', noContexts, 'app', 'delete', ...args], { from: 'user' });
  } catch (err) {
    error = err;
  }
  const leaf = program.commands.find((c) => c.name() === 'app')!.commands.find((c) => c.name() === 'delete')!;
  return { opts: leaf.opts(), error };
}

beforeEach(() => vi.stubEnv('CAPSTAN_SERVER', ''));
afterEach(() => vi.unstubAllEnvs());

describe('capstan app delete arguments', () => {
  it('cascades in the foreground by default, as argocd app delete', async () => {
    const r = await parse('guestbook', '--yes');
    expect(r.opts).toMatchObject({ cascade: true, propagationPolicy: 'foreground', yes: true });
    expect((r.error as Error).message).toMatch(/^no server/);
  });

  it('reads --cascade=false, --cascade and -p background', async () => {
    expect((await parse('guestbook', '--cascade=false', '--yes')).opts).toMatchObject({ cascade: false });
    expect((await parse('guestbook', '--cascade', '--yes')).opts).toMatchObject({ cascade: true });
    expect((await parse('a', 'b', '-p', 'background', '--yes')).opts).toMatchObject({
      propagationPolicy: 'background',
    });
  });

  it('refuses a --cascade that is not a boolean, and a deletion without confirmation when it cannot ask', async () => {
    expect((await parse('guestbook', '--cascade=maybe', '--yes')).error).toMatchObject({
      message: '--cascade: expected true or false, got "maybe"',
    });
    const unconfirmed = await parse('guestbook');
    expect((unconfirmed.error as Error).message).toBe(
      "refusing to delete 'guestbook' and its resources without confirmation: stdin is not a terminal (pass --yes)",
    );
  });
});
