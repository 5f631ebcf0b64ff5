// Repository URLs: the form used to decide whether two URLs name the same repository (Argo CD's
// NormalizeGitURL: trimmed, lower-cased, scp-like SSH turned into ssh://, `.git` dropped), and
// the validation applied before a URL is stored or fetched.
import { ValidationError } from '@capstan/service';

const SCP_LIKE = /^([^/:@]+@)?([^/:]+):(?!\/\/)(.+)$/;
const SSH_USER = /^(ssh:\/\/)?([^/:]*?)@[^@]+$/;

/** True for `git@host:org/repo` and `ssh://…` URLs. */
export function isSshUrl(url: string): boolean {
  return url.trim().startsWith('ssh://') || (SSH_USER.test(url.trim()) && !/^https?:\/\//i.test(url.trim()));
}

/** The comparison form of a repository URL; equal forms name the same repository. */
export function normalizeRepoUrl(url: string): string {
  let repo = url.trim().toLowerCase();
  if (isSshUrl(repo) && !repo.startsWith('ssh://')) {
    // Replace the first ':' of scp-like syntax with '/' so it parses as a path, not a port.
    repo = 'ssh://' + repo.replace(':', '/');
  }
  if (repo.endsWith('.git')) repo = repo.slice(0, -'.git'.length);
  try {
    return new URL(repo).toString().replace(/^ssh:\/\//, '');
  } catch {
    return repo.replace(/^ssh:\/\//, '');
  }
}

export function sameRepoUrl(a: string, b: string): boolean {
  return normalizeRepoUrl(a) === normalizeRepoUrl(b);
}

/** A URL safe to print: any userinfo password is replaced, so errors never echo a secret. */
export function redactRepoUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = 'redacted';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:redacted@');
  }
}

/**
 * Checks a repository URL before it is stored or fetched: http(s), ssh or scp-like only, and no
 * credentials inside the URL (they belong in a credential, where they are encrypted).
 */
export function validateRepoUrl(url: string, field = 'url'): string {
  const trimmed = url.trim();
  const fail = (description: string) => new ValidationError([{ field, description }]);
  if (!trimmed) throw fail('must not be empty');
  if (/[\s\0]/.test(trimmed)) throw fail('must not contain whitespace or control characters');
  if (trimmed.startsWith('-')) throw fail('must not start with "-"');
  if (/^https?:\/\//i.test(trimmed) || trimmed.startsWith('ssh://')) {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      throw fail(`is not a valid URL: ${redactRepoUrl(trimmed)}`);
    }
    if (parsed.password) throw fail('must not carry a password; store it in the credential instead');
    if (parsed.username && parsed.protocol !== 'ssh:')
      throw fail('must not carry a username; store it in the credential instead');
    if (!parsed.hostname) throw fail('must name a host');
    return trimmed;
  }
  if (SCP_LIKE.test(trimmed)) return trimmed;
  throw fail(`must be an http(s)://, ssh:// or user@host:path URL, got ${redactRepoUrl(trimmed)}`);
}
