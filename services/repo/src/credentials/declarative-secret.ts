// Argo CD's declarative repository secret: a Kubernetes Secret labelled
// `argocd.argoproj.io/secret-type: repository` whose data (base64) or stringData carries `url`,
// `project`, `type`, `name`, `username`, `password`, `sshPrivateKey`, `insecure`. Parsing turns
// it into a CredentialInput that keeps the Secret's own name, so applying it again updates the
// same credential. Errors name the field path and never echo a value.
import { z } from 'zod';
import { ValidationError, type FieldViolation } from '@capstan/service';
import type { CredentialInput } from './credential.js';
import { validateRepoUrl } from './repo-url.js';
import { credentialRepoUrl } from './credential-input.js';

export const SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const FIELDS = [
  'url',
  'project',
  'type',
  'name',
  'username',
  'password',
  'sshPrivateKey',
  'insecure',
  'enableOCI',
  'insecureOCIForceHttp',
] as const;

const secretSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: z.object({
    name: z.string().regex(DNS_SUBDOMAIN, 'must be a Kubernetes object name (DNS subdomain)'),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
  stringData: z.record(z.string(), z.string()).optional(),
});

export interface DeclarativeRepositorySecret {
  /** The Secret's metadata.name, kept as the credential's name. */
  name: string;
  input: CredentialInput;
}

function violation(field: string, description: string): ValidationError {
  return new ValidationError([{ field, description }]);
}

/** Parses a repository Secret (already decoded from YAML/JSON). */
export function parseRepositorySecret(manifest: unknown): DeclarativeRepositorySecret {
  const parsed = secretSchema.safeParse(manifest);
  if (!parsed.success) {
    // zod messages for the data maps could quote a value; describe by path and kind only.
    const violations: FieldViolation[] = parsed.error.issues.map((issue) => ({
      field: issue.path.map(String).join('.') || '(root)',
      description:
        issue.path[0] === 'data' || issue.path[0] === 'stringData' ? 'must be a string' : issue.message,
    }));
    throw new ValidationError(violations);
  }
  const secret = parsed.data;
  const secretType = secret.metadata.labels?.[SECRET_TYPE_LABEL];
  if (secretType !== 'repository') {
    throw violation(
      `metadata.labels.${SECRET_TYPE_LABEL}`,
      `must be "repository"${secretType ? ` (repo-creds templates are not supported)` : ''}`,
    );
  }

  const values: Partial<Record<(typeof FIELDS)[number], { value: string; field: string }>> = {};
  for (const [key, encoded] of Object.entries(secret.data ?? {})) {
    if (!(FIELDS as readonly string[]).includes(key)) continue;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw violation(`data.${key}`, 'must be base64');
    values[key as (typeof FIELDS)[number]] = {
      value: Buffer.from(encoded, 'base64').toString('utf8'),
      field: `data.${key}`,
    };
  }
  // As in Kubernetes, stringData wins over data for the same key.
  for (const [key, value] of Object.entries(secret.stringData ?? {})) {
    if ((FIELDS as readonly string[]).includes(key))
      values[key as (typeof FIELDS)[number]] = { value, field: `stringData.${key}` };
  }

  const url = values.url;
  if (!url) throw violation('stringData.url', 'is required (in data or stringData)');
  const type = values.type?.value ?? 'git';
  if (type !== 'git' && type !== 'helm')
    throw violation(values.type?.field ?? 'stringData.type', 'must be "git" or "helm"');
  const flag = (key: 'insecure' | 'enableOCI' | 'insecureOCIForceHttp'): boolean => {
    const value = values[key]?.value ?? 'false';
    if (value !== 'true' && value !== 'false')
      throw violation(values[key]?.field ?? `stringData.${key}`, 'must be "true" or "false"');
    return value === 'true';
  };
  const insecure = flag('insecure');
  const enableOci = flag('enableOCI');
  const insecureOciForceHttp = flag('insecureOCIForceHttp');
  const repoUrl = credentialRepoUrl({ url: url.value, type, enableOci });
  validateRepoUrl(repoUrl, url.field, { allowOci: type === 'helm' });
  const project = values.project?.value ?? '';
  if (project !== '' && !DNS_SUBDOMAIN.test(project))
    throw violation(values.project?.field ?? 'stringData.project', 'must be a project name');

  const password = values.password?.value;
  const sshPrivateKey = values.sshPrivateKey?.value;
  return {
    name: secret.metadata.name,
    input: {
      name: secret.metadata.name,
      url: repoUrl,
      project,
      type,
      displayName: values.name?.value ?? '',
      username: values.username?.value ?? '',
      insecure,
      enableOci,
      insecureOciForceHttp,
      secret: {
        ...(password ? { password } : {}),
        ...(sshPrivateKey ? { sshPrivateKey } : {}),
      },
    },
  };
}
