// capstan account: local accounts and API tokens, as argocd account.
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { secret } from '../config/secret-input.js';
import { outputOption, printList, printObject, type OutputFormat } from '../output/format.js';

const csv = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function accountCommand(): Command {
  const account = new Command('account').description('manage local accounts and API tokens');
  account.addCommand(accountGetUserInfoCommand());
  account.addCommand(accountCanICommand());
  account.addCommand(accountListCommand());
  account.addCommand(accountCreateCommand());
  account.addCommand(accountDeleteCommand());
  account.addCommand(accountUpdatePasswordCommand());
  account.addCommand(accountGenerateTokenCommand());
  account.addCommand(accountTokensCommand());
  account.addCommand(accountDeleteTokenCommand());
  return account;
}

function accountGetUserInfoCommand(): Command {
  return new Command('get-user-info')
    .description('who the current token belongs to')
    .addOption(outputOption())
    .action((o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const u = await c.call(c.sessions.getUserInfo.bind(c.sessions), apiv1.Empty.fromPartial({}));
        printObject(o.output, apiv1.UserInfo.toJSON(u), [
          ['Logged In', u.loggedIn ? 'true' : 'false'],
          ['Username', u.username],
          ['Groups', u.groups.join(',')],
        ]);
      }),
    );
}

function accountCanICommand(): Command {
  return new Command('can-i')
    .description('whether the current user may do ACTION on RESOURCE/SUBRESOURCE (yes or no)')
    .argument('<action>')
    .argument('<resource>')
    .argument('[subresource]', 'object, e.g. team-a/guestbook', '')
    .action((action: string, resource: string, subresource: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.accounts.canI.bind(c.accounts), { resource, action, subresource });
        process.stdout.write(`${r.value}\n`);
      }),
    );
}

function accountListCommand(): Command {
  return new Command('list')
    .description('list local accounts')
    .addOption(outputOption())
    .action((o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.accounts.list.bind(c.accounts), apiv1.Empty.fromPartial({}));
        printList(
          o.output,
          r.items,
          [
            ['NAME', (a) => a.name],
            ['ENABLED', (a) => a.enabled],
            ['CAPABILITIES', (a) => a.capabilities.join(', ')],
            ['GROUPS', (a) => a.groups.join(', ')],
          ],
          (a) => apiv1.Account.toJSON(a),
          (a) => a.name,
        );
      }),
    );
}

function accountCreateCommand(): Command {
  return new Command('create')
    .description('create a local account (password from stdin or CAPSTAN_NEW_PASSWORD)')
    .argument('<name>')
    .option('--groups <list>', 'comma-separated groups (bind them to roles in RBAC or project roles)', '')
    .option('--capabilities <list>', 'login, apiKey', 'login')
    .option('--password-stdin', 'read the password from stdin')
    .addOption(outputOption())
    .action(
      (
        name: string,
        o: { groups: string; capabilities: string; passwordStdin?: boolean; output: OutputFormat },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const capabilities = csv(o.capabilities);
          const password = capabilities.includes('login')
            ? await secret({
                stdin: o.passwordStdin,
                env: 'CAPSTAN_NEW_PASSWORD',
                prompt: `Password for ${name}: `,
              })
            : '';
          const a = await c.call(c.accounts.create.bind(c.accounts), {
            name,
            password,
            capabilities,
            groups: csv(o.groups),
          });
          printObject(o.output, apiv1.Account.toJSON(a), [
            ['Name', a.name],
            ['Capabilities', a.capabilities.join(', ')],
            ['Groups', a.groups.join(', ')],
          ]);
        }),
    );
}

function accountDeleteCommand(): Command {
  return new Command('delete')
    .description('delete a local account and revoke its tokens')
    .argument('<name>')
    .action((name: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await c.call(c.accounts.delete.bind(c.accounts), { name });
        process.stdout.write(`account '${name}' deleted\n`);
      }),
    );
}

function accountUpdatePasswordCommand(): Command {
  return new Command('update-password')
    .description(
      'change a password (stdin: current password, then new password; or CAPSTAN_CURRENT_PASSWORD / CAPSTAN_NEW_PASSWORD)',
    )
    .option('--account <name>', 'another account (admins)', '')
    .option('--password-stdin', 'read the passwords from stdin, one per line')
    .action((o: { account: string; passwordStdin?: boolean }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const currentPassword = o.account
          ? ''
          : await secret({
              stdin: o.passwordStdin,
              env: 'CAPSTAN_CURRENT_PASSWORD',
              prompt: 'Current password: ',
              line: 0,
            });
        const newPassword = await secret({
          stdin: o.passwordStdin,
          env: 'CAPSTAN_NEW_PASSWORD',
          prompt: 'New password: ',
          line: o.account ? 0 : 1,
        });
        await c.call(c.accounts.updatePassword.bind(c.accounts), {
          name: o.account,
          currentPassword,
          newPassword,
        });
        process.stdout.write('Password updated\n');
      }),
    );
}

function accountGenerateTokenCommand(): Command {
  return new Command('generate-token')
    .description('create a long-lived API token (printed once)')
    .option('-a, --account <name>', 'account (default: the current user)', '')
    .option('-e, --expires-in <seconds>', 'lifetime in seconds (0: no expiry)', '0')
    .option('--id <id>', 'token id (default: generated)', '')
    .action((o: { account: string; expiresIn: string; id: string }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.accounts.createToken.bind(c.accounts), {
          name: o.account,
          expiresIn: Number(o.expiresIn),
          id: o.id,
        });
        process.stdout.write(`${r.token}\n`);
      }),
    );
}

function accountTokensCommand(): Command {
  return new Command('tokens')
    .description("list an account's API tokens")
    .option('-a, --account <name>', 'account (default: the current user)', '')
    .addOption(outputOption())
    .action((o: { account: string; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.accounts.listTokens.bind(c.accounts), { name: o.account });
        printList(
          o.output,
          r.items,
          [
            ['ID', (t) => t.id],
            ['ISSUED AT', (t) => t.issuedAt],
            ['EXPIRES AT', (t) => t.expiresAt || 'never'],
          ],
          (t) => apiv1.Token.toJSON(t),
          (t) => t.id,
        );
      }),
    );
}

function accountDeleteTokenCommand(): Command {
  return new Command('delete-token')
    .description('revoke an API token')
    .argument('<id>')
    .option('-a, --account <name>', 'account (default: the current user)', '')
    .action((id: string, o: { account: string }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await c.call(c.accounts.deleteToken.bind(c.accounts), { name: o.account, id });
        process.stdout.write(`token '${id}' revoked\n`);
      }),
    );
}
