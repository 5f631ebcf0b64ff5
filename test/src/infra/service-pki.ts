// The installation's internal PKI, made with openssl (node:crypto cannot sign X.509, and openssl is
// already what the project's scripts and CI use for certificates): one CA and one certificate per
// service, EC P-256, the service named by the SAN URI spiffe://capstan/<service> and served under
// DNS <service>, capstan-<service>, localhost and 127.0.0.1. Keys are written mode 600.
// Used by the tests (testPki), the demo (scripts/demo) and scripts/make-service-certs.ts. The SAN
// URI is the one @capstan/service-identity's peerService() reads (SPIFFE_PREFIX there).
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const serviceUri = (service: string) => `spiffe://capstan/${service}`;

const execFileAsync = promisify(execFile);

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: string };
    if (e.code === 'ENOENT')
      throw new Error('openssl is needed to make the service certificates: install it');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr ?? e.message}`);
  }
}

export interface ServiceCertFiles {
  certFile: string;
  keyFile: string;
}

export interface ServicePki {
  dir: string;
  caFile: string;
  services: Record<string, ServiceCertFiles>;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** The files a PKI in `dir` has (or would have). */
export function pkiFiles(dir: string, services: readonly string[]): ServicePki {
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    services: Object.fromEntries(
      services.map((s) => [s, { certFile: join(dir, `${s}.crt`), keyFile: join(dir, `${s}.key`) }]),
    ),
  };
}

/**
 * A CA (ca.crt/ca.key) and a certificate per service (<service>.crt/.key) in `dir`, valid `days`.
 * An existing CA is kept (its key signs the services that are missing), so a second run adds
 * services without invalidating the others; existing service certificates are kept.
 */
export async function makeServicePki(
  dir: string,
  services: readonly string[],
  opts: { days?: number; extraDnsNames?: readonly string[] } = {},
): Promise<ServicePki> {
  const days = String(opts.days ?? 365);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = pkiFiles(dir, services);
  if (!existsSync(files.caFile) || !existsSync(join(dir, 'ca.key'))) {
    await openssl(
      [
        'req',
        '-x509',
        ...EC,
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        days,
        '-subj',
        '/CN=capstan-internal-ca',
        '-addext',
        'basicConstraints=critical,CA:TRUE,pathlen:0',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
  }
  chmodSync(join(dir, 'ca.key'), 0o600);
  for (const service of services) {
    const { certFile, keyFile } = files.services[service]!;
    if (existsSync(certFile) && existsSync(keyFile)) continue;
    const dns = [service, `capstan-${service}`, 'localhost', ...(opts.extraDnsNames ?? [])];
    const ext = join(dir, `${service}.ext`);
    writeFileSync(
      ext,
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth,clientAuth',
        `subjectAltName=URI:${serviceUri(service)},${dns.map((d) => `DNS:${d}`).join(',')},IP:127.0.0.1,IP:::1`,
        '',
      ].join('\n'),
    );
    await openssl(
      ['req', ...EC, '-keyout', `${service}.key`, '-out', `${service}.csr`, '-subj', `/CN=${service}`],
      dir,
    );
    chmodSync(keyFile, 0o600);
    await openssl(
      [
        'x509',
        '-req',
        '-in',
        `${service}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${service}.crt`,
        '-days',
        days,
        '-extfile',
        `${service}.ext`,
      ],
      dir,
    );
    rmSync(join(dir, `${service}.csr`), { force: true });
    rmSync(ext, { force: true });
  }
  return files;
}
