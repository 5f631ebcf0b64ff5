// Internal gRPC runs over mutual TLS: every service has a certificate signed by the installation's
// CA whose subjectAltName carries its identity as the URI `spiffe://capstan/<service>`. A server
// learns the calling service from the verified client certificate (grpc-js exposes only certificates
// that passed verification against the CA), and binds it to the service token presented on the call.
import { readFileSync } from 'node:fs';
import { credentials, ServerCredentials, type ChannelCredentials, type Server } from '@grpc/grpc-js';
import { FailedPreconditionError, ValidationError, type Settings } from '@capstan/service';
import { z } from 'zod';
import { SERVICE_NAME } from './service-tokens.js';

export const SPIFFE_PREFIX = 'spiffe://capstan/';

/** The URI SAN that names a service in its certificate. */
export function serviceUri(service: string): string {
  return `${SPIFFE_PREFIX}${service}`;
}

/** PEM material of one service: the CA it trusts, its certificate chain and its private key. */
export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/**
 * Settings every service shares (spread into its own). The key's content (`tls.key`, environment
 * or configuration file only) wins over `tls.key-file`.
 */
export const tlsSettings = {
  'tls.ca-file': {
    schema: z.string().default(''),
    default: '',
    description: "PEM file of the CA that signs the services' certificates (internal gRPC is mutual TLS)",
  },
  'tls.cert-file': {
    schema: z.string().default(''),
    default: '',
    description: "PEM file of this service's certificate (SAN URI spiffe://capstan/<service>)",
  },
  'tls.key-file': {
    schema: z.string().default(''),
    default: '',
    description: "PEM file of this service's private key (mode 600); tls.key wins when both are set",
  },
  'tls.key': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_TLS_KEY',
    description: "this service's private key as PEM text (environment or configuration file only)",
  },
} satisfies Settings;

export interface TlsConfig {
  'tls.ca-file': string;
  'tls.cert-file': string;
  'tls.key-file': string;
  'tls.key': string;
}

/** Reads the files the settings name; undefined when none is set, an error when only some are. */
export function loadTls(config: TlsConfig): TlsMaterial | undefined {
  const caFile = config['tls.ca-file'];
  const certFile = config['tls.cert-file'];
  const keyFile = config['tls.key-file'];
  const keyPem = config['tls.key'];
  if (!caFile && !certFile && !keyFile && !keyPem) return undefined;
  const missing = [
    ...(caFile ? [] : ['tls.ca-file']),
    ...(certFile ? [] : ['tls.cert-file']),
    ...(keyFile || keyPem ? [] : ['tls.key-file']),
  ];
  if (missing.length > 0)
    throw new ValidationError(
      missing.map((field) => ({ field, description: 'is required when any tls.* setting is given' })),
    );
  const read = (field: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ValidationError([{ field, description: `cannot read ${file}` }], { cause: err });
    }
  };
  return {
    ca: read('tls.ca-file', caFile),
    cert: read('tls.cert-file', certFile),
    key: keyPem ? Buffer.from(keyPem) : read('tls.key-file', keyFile),
  };
}

/** Like loadTls, but a service that must speak mutual TLS refuses to start without it. */
export function requireTls(config: TlsConfig, service: string): TlsMaterial {
  const tls = loadTls(config);
  if (!tls)
    throw new FailedPreconditionError(
      `${service}: internal gRPC needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file (docs/deploying.md)`,
    );
  return tls;
}

/**
 * Server credentials: TLS with this service's certificate; client certificates are requested and
 * verified against the CA. `requireClientCertificate`: a connection without a valid one is refused
 * during the handshake (repo); otherwise it is served without a service identity (the api, whose
 * users connect without certificates; peerService() then finds none, since grpc-js exposes only
 * certificates that verified).
 */
export function serverCredentials(tls: TlsMaterial, requireClientCertificate: boolean): ServerCredentials {
  const creds = ServerCredentials.createSsl(tls.ca, [{ private_key: tls.key, cert_chain: tls.cert }], true);
  if (!requireClientCertificate) {
    // createSsl(…, true) asks for a certificate and rejects connections without a valid one;
    // grpc-js has no public switch for "ask, verify, but do not require": its server options are
    // Node's tls options, where that is rejectUnauthorized: false (the handshake then records
    // socket.authorized, which getAuthContext() honours).
    const internal = creds as unknown as { _getConstructorOptions(): Record<string, unknown> | null };
    const options = internal._getConstructorOptions();
    if (!options) throw new Error('grpc-js secure server credentials without options');
    options.rejectUnauthorized = false;
  }
  return creds;
}

/**
 * Binds an internal gRPC server (repo, appset, sync) on `address` with mutual TLS: a connection
 * without a client certificate of the installation's CA is refused during the handshake. `stop`
 * lets the calls in progress finish.
 */
export async function listenInternal(
  server: Server,
  address: string,
  tls: TlsMaterial,
): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, serverCredentials(tls, true), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port, stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}

/** Channel credentials of a service calling another: verifies the server against the CA, presents its certificate. */
export function channelCredentials(tls: TlsMaterial): ChannelCredentials {
  return credentials.createSsl(tls.ca, tls.key, tls.cert);
}

/** What grpc-js tells a handler about the connection (ServerUnaryCall and friends). */
export interface PeerSource {
  getAuthContext?(): { sslPeerCertificate?: { subjectaltname?: string } | undefined } | null;
}

/**
 * The service named by the verified client certificate of the call's connection, or undefined
 * (no TLS, no certificate, or a certificate that does not name exactly one service).
 */
export function peerService(call: PeerSource): string | undefined {
  const san = call.getAuthContext?.()?.sslPeerCertificate?.subjectaltname;
  if (!san) return undefined;
  const names = san
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith(`URI:${SPIFFE_PREFIX}`))
    .map((s) => s.slice(`URI:${SPIFFE_PREFIX}`.length));
  return names.length === 1 && SERVICE_NAME.test(names[0]!) ? names[0] : undefined;
}
