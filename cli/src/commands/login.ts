// capstan login / logout / context, as argocd's.
import { Command } from 'commander';
import { apiv1, unary } from '@capstan/proto';
import { clientsFor, connect, globalOptions } from '../client/connection.js';
import { configPath, readConfig, upsertContext, writeConfig } from '../config/context-store.js';
import { secret } from '../config/secret-input.js';
import { CliError } from '../errors.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

export function loginCommand(): Command {
  return new Command('login')
    .description('log in to a Capstan api and save the session in a context')
    .argument('<server>', 'gRPC address of the api, host:port')
    .option('--username <name>', 'local account', process.env.CAPSTAN_USERNAME ?? 'admin')
    .option('--password-stdin', 'read the password from stdin (else CAPSTAN_PASSWORD or a prompt)')
    .option('--name <context>', 'context name (default: the server)')
    .action(
      async (
        server: string,
        o: { username: string; passwordStdin?: boolean; name?: string },
        cmd: Command,
      ) => {
        const password = await secret({
          stdin: o.passwordStdin,
          env: 'CAPSTAN_PASSWORD',
          prompt: 'Password: ',
        });
        const c = clientsFor(server, '', globalOptions(cmd).serverCrt);
        try {
          const res = await unary(c.sessions.create.bind(c.sessions), { username: o.username, password });
          const path = configPath(globalOptions(cmd).config);
          const name = o.name || server;
          writeConfig(
            path,
            upsertContext(readConfig(path), { name, server, user: o.username, token: res.token }),
          );
          process.stdout.write(`'${o.username}' logged in successfully\nContext '${name}' updated\n`);
        } finally {
          c.close();
        }
      },
    );
}

export function logoutCommand(): Command {
  return new Command('logout')
    .description('revoke the session of a context and forget its token')
    .argument('[context]', 'context name (default: the current one)')
    .action(async (name: string | undefined, _o: unknown, cmd: Command) => {
      const g = globalOptions(cmd);
      const path = configPath(g.config);
      const config = readConfig(path);
      const wanted = name || config.currentContext;
      const ctx = config.contexts.find((c) => c.name === wanted);
      if (!ctx) throw new CliError(`no context ${wanted || '(none is current)'}`);
      const c = connect({ ...g, context: ctx.name });
      try {
        await c.call(c.sessions.delete.bind(c.sessions), apiv1.Empty.fromPartial({}));
      } finally {
        c.close();
      }
      writeConfig(path, {
        ...config,
        contexts: config.contexts.map((x) => (x.name === ctx.name ? { ...x, token: '' } : x)),
      });
      process.stdout.write(`Logged out from '${ctx.name}'\n`);
    });
}

export function contextCommand(): Command {
  return new Command('context')
    .alias('ctx')
    .description('list contexts, or switch to one')
    .argument('[name]', 'context to make current')
    .addOption(outputOption())
    .action((name: string | undefined, o: { output: OutputFormat }, cmd: Command) => {
      const path = configPath(globalOptions(cmd).config);
      const config = readConfig(path);
      if (name) {
        if (!config.contexts.some((c) => c.name === name)) throw new CliError(`no context ${name}`);
        writeConfig(path, { ...config, currentContext: name });
        process.stdout.write(`Switched to context '${name}'\n`);
        return;
      }
      printList(
        o.output,
        config.contexts,
        [
          ['CURRENT', (c) => (c.name === config.currentContext ? '*' : '')],
          ['NAME', (c) => c.name],
          ['SERVER', (c) => c.server],
          ['USER', (c) => c.user],
        ],
        (c) => ({ name: c.name, server: c.server, user: c.user, current: c.name === config.currentContext }),
        (c) => c.name,
      );
    });
}
