// A target cluster's KubeConfig for exactly one identity: the control-plane credentials
// authenticate; with impersonation on, Impersonate-User (set by client-node on every request of the
// KubeConfig) decides what a request may do. An empty ServiceAccount username refuses to build it
// (fail closed). One keep-alive agent per KubeConfig, so connections never cross identities.
import { KubeConfig } from '@kubernetes/client-node';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { CapstanError } from '@capstan/service';

/** A target cluster's control-plane credentials, as the api hands them out (never logged). */
export interface ClusterConnection {
  readonly name: string;
  readonly server: string;
  readonly bearerToken?: string;
  readonly username?: string;
  readonly password?: string;
  /** PEM */
  readonly caData?: string;
  readonly certData?: string;
  readonly keyData?: string;
  readonly insecure?: boolean;
  readonly serverName?: string;
}

export type SyncIdentity =
  { readonly kind: 'service-account'; readonly username: string } | { readonly kind: 'control-plane' };

export class ImpersonationError extends CapstanError {
  constructor(message: string) {
    super('FAILED_PRECONDITION', message, { retryable: false });
  }
}

const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

/**
 * `maxSockets`: connections the KubeConfig's keep-alive agent may open (default 32); the
 * reconciler's informers hold one per watch, so theirs is unbounded.
 */
export function kubeConfigFor(
  conn: ClusterConnection,
  identity: SyncIdentity,
  options: { maxSockets?: number } = {},
): KubeConfig {
  if (identity.kind === 'service-account' && identity.username.trim() === '') {
    throw new ImpersonationError(
      'impersonation is on but the ServiceAccount username is empty: refusing to sync (fail closed)',
    );
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: conn.name,
        server: conn.server,
        skipTLSVerify: conn.insecure === true,
        ...(conn.caData ? { caData: b64(conn.caData) } : {}),
        ...(conn.serverName ? { tlsServerName: conn.serverName } : {}),
      },
    ],
    users: [
      {
        name: 'capstan-sync',
        ...(conn.bearerToken ? { token: conn.bearerToken } : {}),
        ...(conn.username ? { username: conn.username, password: conn.password ?? '' } : {}),
        ...(conn.certData ? { certData: b64(conn.certData) } : {}),
        ...(conn.keyData ? { keyData: b64(conn.keyData) } : {}),
        ...(identity.kind === 'service-account' ? { impersonateUser: identity.username } : {}),
      },
    ],
    contexts: [{ name: 'sync', cluster: conn.name, user: 'capstan-sync' }],
    currentContext: 'sync',
  });
  keepConnections(kc, options.maxSockets ?? 32);
  return kc;
}

/**
 * client-node builds a new https.Agent (a new TLS handshake and SecureContext) for every request;
 * the sync makes many requests to one cluster as one identity, so it keeps one keep-alive agent
 * per KubeConfig instead. The TLS options (CA, client certificate) are fixed per KubeConfig, and a
 * KubeConfig serves exactly one identity, so connections are never shared across identities.
 */
function keepConnections(kc: KubeConfig, maxSockets: number): void {
  const target = kc as unknown as { createAgent: (cluster: unknown, options: AgentOptions) => unknown };
  const original = target.createAgent.bind(kc);
  let agent: HttpsAgent | undefined;
  target.createAgent = (cluster, options) => {
    if (!(kc.getCurrentCluster()?.server ?? '').startsWith('https:')) return original(cluster, options);
    agent ??= new HttpsAgent({ ...options, keepAlive: true, maxSockets });
    return agent;
  };
  // After a timeout the connections may be stuck on a hung server: drop them all, start afresh.
  connectionResets.set(kc, () => {
    agent?.destroy();
    agent = undefined;
  });
}

const connectionResets = new WeakMap<KubeConfig, () => void>();

/** Drops the KubeConfig's kept connections (after a timeout they may be stuck on a hung server). */
export function connectionResetOf(kc: KubeConfig): () => void {
  return connectionResets.get(kc) ?? (() => undefined);
}
