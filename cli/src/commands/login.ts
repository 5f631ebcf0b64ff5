// capstan login / logout / context, as argocd's.
import { Command } from 'commander';
import { apiv1, unary } from '@capstan/proto';
import { clientsFor, connect, globalOptions, type Connection } from '../client/connection.js';
import { receiveCode, ssoAuthorizationRequest } from './login-sso.js';
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
    .option('--sso', 'log in through the single sign-on provider (OIDC, in a browser)')
    .option('--sso-port <port>', 'port of the local callback listener for --sso', '8085')
    .option('--name <context>', 'context name (default: the server)')
    .action(
      async (
        server: string,
        o: { username: string; passwordStdin?: boolean; sso?: boolean; ssoPort: string; name?: string },
        cmd: Command,
      ) => {
        const c = clientsFor(server, '', globalOptions(cmd).serverCrt);
        try {
          const session = o.sso ? await loginSso(c, o.ssoPort) : await loginLocal(c, o);
          const path = configPath(globalOptions(cmd).config);
          const name = o.name || server;
          writeConfig(path, upsertContext(readConfig(path), { name, server, ...session }));
          process.stdout.write(`'${session.user}' logged in successfully\nContext '${name}' updated\n`);
        } finally {
          c.close();
        }
      },
    );
}

async function loginLocal(
  c: Connection,
  o: { username: string; passwordStdin?: boolean },
): Promise<{ user: string; token: string }> {
  const password = await secret({ stdin: o.passwordStdin, env: 'CAPSTAN_PASSWORD', prompt: 'Password: ' });
  const res = await unary(c.sessions.create.bind(c.sessions), { username: o.username, password });
  return { user: o.username, token: res.token };
}

async function loginSso(
  c: Connection,
  portText: string,
): Promise<{ user: string; token: string; refreshToken?: string }> {
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new CliError(`invalid --sso-port ${JSON.stringify(portText)}`, 2);
  const cfg = await unary(c.sessions.getSsoConfig.bind(c.sessions), {});
  const req = ssoAuthorizationRequest(cfg, port);
  const code = receiveCode(port, req.state, 5 * 60_000);
  process.stderr.write(`Open this URL in a browser to log in with ${cfg.name}:\n${req.url}\n`);
  const res = await unary(c.sessions.createSso.bind(c.sessions), {
    code: await code,
    codeVerifier: req.verifier,
    redirectUri: req.redirectUri,
    nonce: req.nonce,
  });
  return {
    user: res.username,
    token: res.token,
    ...(res.refreshToken ? { refreshToken: res.refreshToken } : {}),
  };
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
        contexts: config.contexts.map((x) =>
          x.name === ctx.name ? { ...x, token: '', refreshToken: '' } : x,
        ),
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
