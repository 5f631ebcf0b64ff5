// A cluster registration: server URL, name, and the control-plane credential in Argo CD's cluster
// secret `config` shape. Exactly one kind of credential; problems name the field, never its value.
import { ValidationError, type FieldViolation } from '@capstan/service';
import { z } from 'zod';
import { dnsSubdomainProblem } from '@capstan/policy';
import { parseOrThrow } from '../support/validation.js';
import type { ClusterInfo } from './cluster.aggregate.js';

const pem = (what: string) =>
  z.string().refine((v) => v === '' || /-----BEGIN [A-Z ]+-----/.test(v), `must be PEM (${what})`);

export const ClusterConfigSchema = z.strictObject({
  bearerToken: z.string().max(16384).default(''),
  username: z.string().max(256).default(''),
  password: z.string().max(1024).default(''),
  tlsClientConfig: z
    .strictObject({
      insecure: z.boolean().default(false),
      serverName: z.string().default(''),
      caData: pem('certificate authority').default(''),
      certData: pem('client certificate').default(''),
      keyData: pem('client key').default(''),
    })
    .default({ insecure: false, serverName: '', caData: '', certData: '', keyData: '' }),
});

export type ClusterConfig = z.output<typeof ClusterConfigSchema>;

export const ClusterRegistrationSchema = z.strictObject({
  server: z.string().min(1, 'required'),
  name: z.string().default(''),
  config: ClusterConfigSchema.default(ClusterConfigSchema.parse({})),
  namespaces: z.array(z.string().min(1)).default([]),
  project: z.string().default(''),
  labels: z.record(z.string(), z.string()).default({}),
});

export type ClusterRegistration = z.output<typeof ClusterRegistrationSchema>;

export function credentialTypeOf(c: ClusterConfig): ClusterInfo['credentialType'] {
  if (c.bearerToken) return 'bearer';
  if (c.username || c.password) return 'basic';
  if (c.tlsClientConfig.certData || c.tlsClientConfig.keyData) return 'tls';
  return 'none';
}

export function validateClusterRegistration(input: unknown): ClusterRegistration {
  const reg = parseOrThrow(ClusterRegistrationSchema, input);
  const v: FieldViolation[] = [];
  let url: URL | undefined;
  try {
    url = new URL(reg.server);
  } catch {
    v.push({ field: 'server', description: 'must be an absolute URL (https://host:port)' });
  }
  if (url && url.protocol !== 'https:' && url.protocol !== 'http:')
    v.push({ field: 'server', description: 'must be an http(s) URL' });
  if (url && (url.username || url.password))
    v.push({ field: 'server', description: 'must not carry credentials; use config' });
  if (reg.name && !/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(reg.name)) {
    v.push({
      field: 'name',
      description: 'must be letters, digits, "-", "_" and ".", starting and ending with a letter or digit',
    });
  }
  if (reg.project) {
    const problem = dnsSubdomainProblem(reg.project);
    if (problem) v.push({ field: 'project', description: problem });
  }
  const c = reg.config;
  const kinds = [
    c.bearerToken !== '',
    c.username !== '' || c.password !== '',
    c.tlsClientConfig.certData !== '' || c.tlsClientConfig.keyData !== '',
  ];
  if (kinds.filter(Boolean).length > 1)
    v.push({
      field: 'config',
      description: 'give one credential: bearerToken, username/password, or tlsClientConfig certData/keyData',
    });
  if ((c.username === '') !== (c.password === ''))
    v.push({ field: 'config.password', description: 'username and password go together' });
  if ((c.tlsClientConfig.certData === '') !== (c.tlsClientConfig.keyData === '')) {
    v.push({ field: 'config.tlsClientConfig.keyData', description: 'certData and keyData go together' });
  }
  if (v.length > 0) throw new ValidationError(v);
  return { ...reg, server: reg.server.replace(/\/+$/, ''), name: reg.name || (url?.host ?? reg.server) };
}
