// The CLI's own logic without a server: contexts file, manifest sources, time parsing, error
// rendering and the command tree (names argocd users expect).
import { mkdtempSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status } from '@grpc/grpc-js';
import { fieldViolationsMetadata } from '@capstan/proto';
import { describe, expect, it } from 'vitest';
import { currentContext, readConfig, upsertContext, writeConfig } from './config/context-store.js';
import { readManifestSources } from './commands/apply.js';
import { parseTime } from './commands/audit.js';
import { describeError } from './errors.js';
import { buildProgram } from './program.js';

describe('contexts file', () => {
  it('round-trips contexts with mode 0600 and switches the current one on login', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'capstan-cli-')), 'nested', 'config');
    let config = upsertContext(readConfig(path), { name: 'a', server: 'h:1', user: 'admin', token: 't1' });
    config = upsertContext(config, { name: 'b', server: 'h:2', user: 'alice', token: 't2' });
    writeConfig(path, config);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const back = readConfig(path);
    expect(back.currentContext).toBe('b');
    expect(currentContext(back)?.token).toBe('t2');
    expect(currentContext(back, 'a')?.server).toBe('h:1');
  });
});

describe('apply sources', () => {
  it('reads files and directories (yaml, yml, json; recursively only when asked) as one stream', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-apply-'));
    writeFileSync(join(dir, 'a.yaml'), 'kind: A');
    writeFileSync(join(dir, 'b.json'), '{"kind":"B"}');
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'c.yml'), 'kind: C');
    expect(readManifestSources([dir], false)).toBe('kind: A\n---\n{"kind":"B"}\n');
    expect(readManifestSources([dir], true)).toContain('kind: C');
    expect(() => readManifestSources([join(dir, 'missing.yaml')], false)).toThrow(/cannot read/);
  });
});

describe('audit times', () => {
  it('accepts durations ago and RFC 3339 times', () => {
    const t = new Date(parseTime('2h')).getTime();
    expect(Math.abs(Date.now() - 2 * 3600_000 - t)).toBeLessThan(5000);
    expect(parseTime('2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00Z');
  });
});

describe('errors', () => {
  it('shows the server code, message and each invalid field, with exit status 2 for bad input', () => {
    const md: Metadata = fieldViolationsMetadata([
      { field: 'spec.destinationServiceAccounts[2].namespace', description: 'invalid glob' },
    ]);
    const out = describeError({ code: status.INVALID_ARGUMENT, details: 'bad project', metadata: md });
    expect(out).toEqual({
      message: 'INVALID_ARGUMENT: bad project\n  spec.destinationServiceAccounts[2].namespace: invalid glob',
      exitCode: 2,
    });
    expect(
      describeError({ code: status.UNAUTHENTICATED, details: 'token expired', metadata: new Metadata() })
        .message,
    ).toMatch(/run capstan login/);
  });
});

describe('command tree', () => {
  it('has the commands and flags argocd users know', () => {
    const program = buildProgram();
    const names = (path: string[]) => {
      let cmd = program;
      for (const p of path) cmd = cmd.commands.find((c) => c.name() === p)!;
      return cmd.commands.map((c) => c.name());
    };
    expect(names([])).toEqual(
      expect.arrayContaining([
        'login',
        'logout',
        'context',
        'account',
        'proj',
        'app',
        'repo',
        'cluster',
        'apply',
        'audit',
        'sync',
        'completion',
      ]),
    );
    expect(names(['app'])).toEqual(
      expect.arrayContaining(['create', 'get', 'list', 'delete', 'sync', 'diff', 'history', 'rollback']),
    );
    expect(names(['proj'])).toEqual(
      expect.arrayContaining([
        'add-destination',
        'remove-destination',
        'add-destination-service-account',
        'remove-destination-service-account',
        'set-parent',
        'role',
      ]),
    );
    const create = program.commands
      .find((c) => c.name() === 'app')!
      .commands.find((c) => c.name() === 'create')!;
    expect(create.options.map((o) => o.long)).toEqual(
      expect.arrayContaining([
        '--repo',
        '--path',
        '--dest-server',
        '--dest-namespace',
        '--project',
        '--upsert',
      ]),
    );
  });
});
