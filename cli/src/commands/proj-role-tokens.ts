// capstan proj role create-token / delete-token / list-tokens: tokens of a project role for CI
// systems (argocd proj role create-token ...). The token is printed once; pass it to the CLI with
// CAPSTAN_AUTH_TOKEN (never argv) or to the HTTP API as `Authorization: Bearer <token>`.
import type { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { parseGoDuration } from '@capstan/policy';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

/** Argo CD's --expires-in: a Go duration, or whole days (`7d`); empty or `0s`: no expiry. Seconds. */
export function parseExpiresIn(text: string): number {
  if (text === '') return 0;
  const days = /^(\d+)d$/.exec(text);
  const ms = days ? Number(days[1]) * 86_400_000 : parseGoDuration(text);
  if (ms === undefined)
    throw new CliError(
      `invalid --expires-in ${JSON.stringify(text)}: expected a duration such as 12h or 7d`,
      2,
    );
  return Math.floor(ms / 1000);
}

const when = (seconds: number, unix: boolean, none: string): string =>
  seconds === 0 ? none : unix ? String(seconds) : new Date(seconds * 1000).toISOString();

/** What create-token prints (Argo CD's lines). */
export function createdTokenText(project: string, role: string, r: apiv1.ProjectTokenResponse): string {
  return [
    `Create token succeeded for proj:${project}:${role}.`,
    `  ID: ${r.id}`,
    `  Issued At: ${when(r.issuedAt, false, '')}`,
    `  Expires At: ${when(r.expiresAt, false, 'Never')}`,
    `  Token: ${r.token}`,
    '',
  ].join('\n');
}

export function addTokenCommands(role: Command): void {
  role
    .command('create-token')
    .description('create a token of a project role (printed once; needs projects, update)')
    .argument('<project>')
    .argument('<role>')
    .option('-e, --expires-in <duration>', 'lifetime, e.g. 12h or 7d (default: no expiry)', '')
    .option('-i, --id <id>', 'token id (default: a random UUID)', '')
    .option('-t, --token-only', 'print the token only, for scripts', false)
    .action(
      (
        project: string,
        name: string,
        o: { expiresIn: string; id: string; tokenOnly: boolean },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const expiresIn = parseExpiresIn(o.expiresIn);
          const r = await c.call(c.projects.createToken.bind(c.projects), {
            project,
            role: name,
            description: '',
            expiresIn,
            id: o.id,
          });
          process.stdout.write(o.tokenOnly ? `${r.token}\n` : createdTokenText(project, name, r));
        }),
    );
  role
    .command('delete-token')
    .description('delete a token of a project role, by its id or its issued-at (Unix seconds)')
    .argument('<project>')
    .argument('<role>')
    .argument('<id-or-issued-at>')
    .action((project: string, name: string, which: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const byIat = /^\d+$/.test(which);
        if (!byIat && which.trim() === '') throw new CliError('name the token by its id or issued-at');
        await c.call(c.projects.deleteToken.bind(c.projects), {
          project,
          role: name,
          iat: byIat ? Number(which) : 0,
          id: byIat ? '' : which,
        });
        process.stdout.write(`token ${which} of role '${name}' in project '${project}' deleted\n`);
      }),
    );
  role
    .command('list-tokens')
    .description("list a project role's tokens")
    .argument('<project>')
    .argument('<role>')
    .option('-u, --unixtime', 'print timestamps as Unix time', false)
    .addOption(outputOption(['table', 'json', 'yaml', 'name']))
    .action((project: string, name: string, o: { unixtime: boolean; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.projects.listTokens.bind(c.projects), { project, role: name });
        printList(
          o.output,
          r.items,
          [
            ['ID', (t) => t.id],
            ['ISSUED AT', (t) => when(t.iat, o.unixtime, '')],
            ['EXPIRES AT', (t) => when(t.exp, o.unixtime, 'Never')],
          ],
          (t) => apiv1.ProjectToken.toJSON(t),
          (t) => t.id,
        );
      }),
    );
}
