// How a command reaches the api: the server and token come from flags, the environment
// (CAPSTAN_SERVER, CAPSTAN_AUTH_TOKEN: never argv for a token) or the current context.
import { readFileSync } from 'node:fs';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary, type UnaryMethod } from '@capstan/proto';
import type { Command } from 'commander';
import { configPath, currentContext, readConfig, writeConfig } from '../config/context-store.js';
import { secondsLeft } from '../commands/login-sso.js';
import { CliError } from '../errors.js';

export interface GlobalOptions {
  server?: string;
  config?: string;
  context?: string;
  serverCrt?: string;
}

export interface Connection {
  server: string;
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res>;
  projects: apiv1.ProjectServiceClient;
  applications: apiv1.ApplicationServiceClient;
  clusters: apiv1.ClusterServiceClient;
  repositories: apiv1.RepositoryServiceClient;
  accounts: apiv1.AccountServiceClient;
  sessions: apiv1.SessionServiceClient;
  audit: apiv1.AuditServiceClient;
  deadLetters: apiv1.DeadLetterServiceClient;
  apply: apiv1.ApplyServiceClient;
  settings: apiv1.SettingsServiceClient;
  applicationSets: apiv1.ApplicationSetServiceClient;
  close(): void;
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/**
 * TLS verified against `serverCrt` (--server-crt, CAPSTAN_SERVER_CRT) when given, like argocd's
 * --server-crt; plaintext otherwise (a local api without tls.* settings).
 */
function channelFor(serverCrt: string | undefined) {
  const file = serverCrt || process.env.CAPSTAN_SERVER_CRT;
  if (!file) return credentials.createInsecure();
  try {
    return credentials.createSsl(readFileSync(file));
  } catch {
    throw new CliError(`cannot read the server certificate ${file}`);
  }
}

export function clientsFor(server: string, token: string, serverCrt?: string): Connection {
  const creds = channelFor(serverCrt);
  const clients = {
    projects: new apiv1.ProjectServiceClient(server, creds),
    applications: new apiv1.ApplicationServiceClient(server, creds),
    clusters: new apiv1.ClusterServiceClient(server, creds),
    repositories: new apiv1.RepositoryServiceClient(server, creds),
    accounts: new apiv1.AccountServiceClient(server, creds),
    sessions: new apiv1.SessionServiceClient(server, creds),
    audit: new apiv1.AuditServiceClient(server, creds),
    deadLetters: new apiv1.DeadLetterServiceClient(server, creds),
    apply: new apiv1.ApplyServiceClient(server, creds),
    settings: new apiv1.SettingsServiceClient(server, creds),
    applicationSets: new apiv1.ApplicationSetServiceClient(server, creds),
  };
  return {
    server,
    call: (method, request) => unary(method, request, { metadata: bearer(token) }),
    ...clients,
    close: () => Object.values(clients).forEach((c) => c.close()),
  };
}

/** The connection of the current context (or --server with CAPSTAN_AUTH_TOKEN). */
export function connect(opts: GlobalOptions): Connection {
  const ctx = currentContext(readConfig(configPath(opts.config)), opts.context);
  const server = opts.server || process.env.CAPSTAN_SERVER || ctx?.server;
  const token = process.env.CAPSTAN_AUTH_TOKEN || ctx?.token;
  if (!server) throw new CliError('no server: run capstan login <server> (or set CAPSTAN_SERVER)');
  if (!token) throw new CliError(`not logged in to ${server}: run capstan login ${server}`);
  return clientsFor(server, token, opts.serverCrt);
}

/**
 * A single sign-on session about to expire (under 30 s left) is renewed with its refresh token
 * first, as argocd does; the context keeps the new token and refresh token. A refusal (logged out,
 * revoked at the provider) leaves the context as it is: the call then says to log in again.
 */
export async function refreshIfExpiring(opts: GlobalOptions): Promise<void> {
  if (process.env.CAPSTAN_AUTH_TOKEN) return;
  const path = configPath(opts.config);
  const config = readConfig(path);
  const ctx = currentContext(config, opts.context);
  if (!ctx?.refreshToken || !ctx.token) return;
  const left = secondsLeft(ctx.token);
  if (left === undefined || left > 30) return;
  const c = clientsFor(opts.server || process.env.CAPSTAN_SERVER || ctx.server, '', opts.serverCrt);
  try {
    const r = await unary(c.sessions.refresh.bind(c.sessions), { refreshToken: ctx.refreshToken });
    const renewed = { ...ctx, token: r.token, refreshToken: r.refreshToken || ctx.refreshToken };
    writeConfig(path, {
      ...config,
      contexts: config.contexts.map((x) => (x.name === ctx.name ? renewed : x)),
    });
  } catch {
    // The call that follows reports the expired session.
  } finally {
    c.close();
  }
}

/** Runs `fn` with a connection and closes it afterwards. */
export async function withConnection<T>(cmd: Command, fn: (c: Connection) => Promise<T>): Promise<T> {
  await refreshIfExpiring(globalOptions(cmd));
  const c = connect(globalOptions(cmd));
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}
