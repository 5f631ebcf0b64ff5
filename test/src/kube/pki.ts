// The throwaway PKI of one local cluster: a CA, the API server's serving certificate and the
// ServiceAccount token signing key. Nothing here outlives the cluster's temporary directory.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: string };
    if (e.code === 'ENOENT')
      throw new Error('openssl is needed to make the test cluster certificates: install it');
    throw new Error(`openssl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

/** The files makeCertificates() writes into the cluster directory. */
export interface ClusterCertificates {
  /** CA certificate, PEM */
  caPem: string;
  /** base64 of caPem (a kubeconfig's certificate-authority-data) */
  caData: string;
  servingCertFile: string;
  servingKeyFile: string;
}

/**
 * A throwaway CA and a serving certificate for 127.0.0.1/localhost signed by it (EC P-256, valid
 * 7 days), in `dir` as ca.crt/ca.key and apiserver.crt/apiserver.key.
 */
export async function makeCertificates(dir: string): Promise<ClusterCertificates> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '7',
      '-subj',
      '/CN=capstan-test-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  await openssl(
    ['req', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver'],
    dir,
  );
  writeFileSync(
    join(dir, 'apiserver.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
      '',
    ].join('\n'),
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'apiserver.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'apiserver.crt',
      '-days',
      '7',
      '-extfile',
      'apiserver.ext',
    ],
    dir,
  );
  const caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
  return {
    caPem,
    caData: Buffer.from(caPem).toString('base64'),
    servingCertFile: join(dir, 'apiserver.crt'),
    servingKeyFile: join(dir, 'apiserver.key'),
  };
}

/** The ServiceAccount token signing key pair (EC P-256) as sa.key/sa.pub in `dir`. */
export function writeServiceAccountKeys(dir: string): { privateKeyFile: string; publicKeyFile: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privateKeyFile = join(dir, 'sa.key');
  const publicKeyFile = join(dir, 'sa.pub');
  writeFileSync(privateKeyFile, privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
  writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKeyFile, publicKeyFile };
}
