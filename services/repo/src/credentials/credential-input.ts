// Validation of a credential before it is stored: every problem is reported with its field path,
// and no message quotes a password or key.
import { ValidationError, type FieldViolation } from '@capstan/service';
import type { CredentialInput } from './credential.js';
import { validateRepoUrl } from './repo-url.js';

const PROJECT = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The URL a credential is stored under: Argo CD writes a Helm OCI registry without a scheme
 * (`registry.example.com/charts` with enableOCI), which is `oci://registry.example.com/charts`;
 * either form selects the credential for a chart source (normalizeRepoUrl drops `oci://`).
 */
export function credentialRepoUrl(input: Pick<CredentialInput, 'url' | 'type' | 'enableOci'>): string {
  const url = input.url.trim();
  if (input.type !== 'helm' || !input.enableOci || /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  return `oci://${url}`;
}

export function validateCredentialInput(raw: CredentialInput): CredentialInput {
  const input = { ...raw, url: credentialRepoUrl(raw) };
  const violations: FieldViolation[] = [];
  const check = (ok: boolean, field: string, description: string) => {
    if (!ok) violations.push({ field, description });
  };
  try {
    validateRepoUrl(input.url, 'url', { allowOci: input.type === 'helm' });
  } catch (err) {
    if (err instanceof ValidationError) violations.push(...err.violations);
    else throw err;
  }
  check(
    input.project === '' || PROJECT.test(input.project),
    'project',
    'must be empty (unscoped) or a project name',
  );
  check(input.type === 'git' || input.type === 'helm', 'type', 'must be "git" or "helm"');
  check(input.name === undefined || SECRET_NAME.test(input.name), 'name', 'must be a Kubernetes object name');
  check(
    input.displayName.length <= 253 && !/[\r\n\0]/.test(input.displayName),
    'displayName',
    'must be one line of at most 253 characters',
  );
  // git's credential protocol is line-based: a newline in a value could inject other fields.
  check(!/[\r\n\0]/.test(input.username), 'username', 'must not contain line breaks or NUL');
  check(input.username.length <= 256, 'username', 'must be at most 256 characters');
  const { password, sshPrivateKey } = input.secret;
  if (password !== undefined) {
    check(!/[\r\n\0]/.test(password), 'password', 'must not contain line breaks or NUL');
    check(password.length <= 4096, 'password', 'must be at most 4096 characters');
  }
  if (sshPrivateKey !== undefined) {
    check(
      /^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(sshPrivateKey.trim()),
      'sshPrivateKey',
      'must be a PEM or OpenSSH private key',
    );
    check(sshPrivateKey.length <= 64 * 1024, 'sshPrivateKey', 'must be at most 64 KiB');
  }
  check(!(password && sshPrivateKey), 'sshPrivateKey', 'cannot be combined with password');
  if (violations.length > 0) throw new ValidationError(violations);
  return { ...input, url: input.url.trim() };
}
