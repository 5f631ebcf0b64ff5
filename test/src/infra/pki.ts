// The internal PKI of a test run: one CA, a certificate per service (api, repo, sync, appset) and
// the api's delegation key pair, made once per test process in a temporary directory (openssl, service-pki.ts) and removed when the process exits.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { makeServicePki } from './service-pki.js';

/** PEM material of one service (the shape of @capstan/service-identity's TlsMaterial). */
export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

function delegationKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export const SERVICES = ['api', 'repo', 'sync', 'appset'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface TestPki {
  dir: string;
  caFile: string;
  /** The api's delegation key (PKCS#8 PEM) and its public half for the verifiers. */
  delegation: { privateKeyPem: string; publicKeyPem: string };
  /** tls.* settings of one service as environment variables. */
  env(service: ServiceName): Record<string, string>;
  /** The same as PEM buffers, for in-process servers and clients. */
  material(service: ServiceName): TlsMaterial;
  /** Settings object keys (tls.ca-file …) for services started in-process with a config. */
  settings(service: ServiceName): {
    'tls.ca-file': string;
    'tls.cert-file': string;
    'tls.key-file': string;
    'tls.key': string;
  };
}

let made: Promise<TestPki> | undefined;

/** The run's PKI (made on first use). */
export function testPki(): Promise<TestPki> {
  made ??= make();
  return made;
}

async function make(): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-test-pki-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const pki = await makeServicePki(dir, SERVICES, { days: 2 });
  const files = (s: ServiceName) => pki.services[s]!;
  return {
    dir,
    caFile: pki.caFile,
    delegation: delegationKeyPair(),
    env: (s) => ({
      CAPSTAN_TLS_CA_FILE: pki.caFile,
      CAPSTAN_TLS_CERT_FILE: files(s).certFile,
      CAPSTAN_TLS_KEY_FILE: files(s).keyFile,
    }),
    material: (s) => ({
      ca: readFileSync(pki.caFile),
      cert: readFileSync(files(s).certFile),
      key: readFileSync(files(s).keyFile),
    }),
    settings: (s) => ({
      'tls.ca-file': pki.caFile,
      'tls.cert-file': files(s).certFile,
      'tls.key-file': files(s).keyFile,
      'tls.key': '',
    }),
  };
}
