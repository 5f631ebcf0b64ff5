import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { CliError } from '../errors.js';
import { addTokenCommands, createdTokenText, parseExpiresIn } from './proj-role-tokens.js';

describe('capstan proj role create-token / delete-token / list-tokens', () => {
  it('reads --expires-in as Argo CD does: Go durations and whole days; empty or 0s: no expiry', () => {
    expect(parseExpiresIn('')).toBe(0);
    expect(parseExpiresIn('0s')).toBe(0);
    expect(parseExpiresIn('24h')).toBe(86_400);
    expect(parseExpiresIn('1h30m')).toBe(5_400);
    expect(parseExpiresIn('7d')).toBe(604_800);
    expect(parseExpiresIn('1500ms')).toBe(1);
  });

  it('refuses a duration it cannot read, as invalid input (exit status 2)', () => {
    for (const bad of ['tomorrow', '-1h', '24', '1w', '7 d']) {
      let err: unknown;
      try {
        parseExpiresIn(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(2);
      expect((err as CliError).message).toContain(JSON.stringify(bad));
    }
  });

  it("prints Argo CD's lines for a created token", () => {
    const text = createdTokenText('team-a', 'ci', {
      token: 'a.b.c',
      id: 'ci-1',
      issuedAt: 1_700_000_000,
      expiresAt: 0,
    });
    expect(text).toBe(
      [
        'Create token succeeded for proj:team-a:ci.',
        '  ID: ci-1',
        '  Issued At: 2023-11-14T22:13:20.000Z',
        '  Expires At: Never',
        '  Token: a.b.c',
        '',
      ].join('\n'),
    );
    expect(createdTokenText('p', 'r', { token: 't', id: 'i', issuedAt: 1, expiresAt: 3601 })).toContain(
      'Expires At: 1970-01-01T01:00:01.000Z',
    );
  });

  it("has argocd's commands, arguments and flags", () => {
    const role = new Command('role');
    addTokenCommands(role);
    const byName = new Map(role.commands.map((c) => [c.name(), c]));
    expect([...byName.keys()]).toEqual(['create-token', 'delete-token', 'list-tokens']);
    const flags = (n: string) => byName.get(n)!.options.map((o) => o.flags);
    expect(flags('create-token')).toEqual([
      '-e, --expires-in <duration>',
      '-i, --id <id>',
      '-t, --token-only',
    ]);
    expect(flags('list-tokens')).toContain('-u, --unixtime');
    expect(byName.get('delete-token')!.registeredArguments.map((a) => a.name())).toEqual([
      'project',
      'role',
      'id-or-issued-at',
    ]);
  });
});
