// Contexts, as argocd keeps them: one file (~/.config/capstan/config, or $CAPSTAN_CONFIG, or
// --config) naming servers and the token for each, mode 0600 because it holds tokens.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';

export interface Context {
  name: string;
  /** gRPC address, host:port. */
  server: string;
  user: string;
  token: string;
  /** A single sign-on session's refresh token (capstan login --sso): a new session when it expires. */
  refreshToken?: string;
}

export interface CliConfig {
  currentContext: string;
  contexts: Context[];
}

export function configPath(explicit?: string): string {
  return (
    explicit ||
    process.env.CAPSTAN_CONFIG ||
    join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'capstan', 'config')
  );
}

export function readConfig(path: string): CliConfig {
  if (!existsSync(path)) return { currentContext: '', contexts: [] };
  const doc = (parse(readFileSync(path, 'utf8')) ?? {}) as Partial<CliConfig>;
  return {
    currentContext: doc.currentContext ?? '',
    contexts: Array.isArray(doc.contexts) ? doc.contexts : [],
  };
}

export function writeConfig(path: string, config: CliConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(config), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function upsertContext(config: CliConfig, ctx: Context): CliConfig {
  return { currentContext: ctx.name, contexts: [...config.contexts.filter((c) => c.name !== ctx.name), ctx] };
}

export function currentContext(config: CliConfig, name?: string): Context | undefined {
  const wanted = name || config.currentContext;
  return config.contexts.find((c) => c.name === wanted);
}
