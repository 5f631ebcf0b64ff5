// kube-apiserver for one local cluster: its static identities, audit policy and flags.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_USERNAME, CONTROL_PLANE_GROUP, CONTROL_PLANE_USERNAME } from './identities.js';
import type { ClusterCertificates } from './pki.js';
import { spawnSupervised } from './supervision.js';

/**
 * Level Metadata for every request except the server's own loopback client, health checks and
 * `quietUsers`/`quietGroups` (a k3s node's own components), which would drown what tests look for.
 */
export function auditPolicy(quiet: { users?: string[]; groups?: string[] } = {}): string {
  const list = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  return [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: [RequestReceived]',
    'rules:',
    "  # The API server's own loopback client (bootstrap, controllers inside the server).",
    '  - level: None',
    `    users: ${list(['system:apiserver', ...(quiet.users ?? [])])}`,
    ...(quiet.groups?.length ? ['  - level: None', `    userGroups: ${list(quiet.groups)}`] : []),
    '  - level: None',
    '    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]',
    '  - level: Metadata',
    '',
  ].join('\n');
}

/**
 * The static token file (--token-auth-file): a fresh admin token (system:masters) and a fresh
 * control-plane token, readable by this user only.
 */
export function writeStaticTokens(dir: string): {
  file: string;
  adminToken: string;
  controlPlaneToken: string;
} {
  const adminToken = randomBytes(32).toString('hex');
  const controlPlaneToken = randomBytes(32).toString('hex');
  const file = join(dir, 'tokens.csv');
  writeFileSync(
    file,
    `${adminToken},${ADMIN_USERNAME},capstan-admin-uid,"system:masters"\n` +
      `${controlPlaneToken},${CONTROL_PLANE_USERNAME},capstan-control-plane-uid,"${CONTROL_PLANE_GROUP}"\n`,
    { mode: 0o600 },
  );
  return { file, adminToken, controlPlaneToken };
}

export interface ApiserverConfig {
  dir: string;
  port: number;
  etcdUrl: string;
  certs: ClusterCertificates;
  tokenFile: string;
  serviceAccountKeys: { privateKeyFile: string; publicKeyFile: string };
  auditPolicyFile: string;
  auditLogPath: string;
  extraArgs?: string[];
}

/** Capstan's kube-apiserver flags, then `extraArgs`. */
export function apiserverArgs(c: ApiserverConfig): string[] {
  return [
    `--etcd-servers=${c.etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${c.port}`,
    `--tls-cert-file=${c.certs.servingCertFile}`,
    `--tls-private-key-file=${c.certs.servingKeyFile}`,
    `--token-auth-file=${c.tokenFile}`,
    '--authorization-mode=RBAC',
    `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
    `--service-account-signing-key-file=${c.serviceAccountKeys.privateKeyFile}`,
    `--service-account-key-file=${c.serviceAccountKeys.publicKeyFile}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    // No controller manager runs: don't let the server try to publish its own endpoints.
    '--endpoint-reconciler-type=none',
    `--audit-policy-file=${c.auditPolicyFile}`,
    `--audit-log-path=${c.auditLogPath}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    // Keep a test server light.
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=1',
    ...(c.extraArgs ?? []),
  ];
}

/** Starts kube-apiserver (log: apiserver.log in the cluster directory); does not wait for it. */
export function startApiserver(binary: string, c: ApiserverConfig): { proc: ChildProcess; log: string } {
  const log = join(c.dir, 'apiserver.log');
  return { proc: spawnSupervised(binary, apiserverArgs(c), log), log };
}
