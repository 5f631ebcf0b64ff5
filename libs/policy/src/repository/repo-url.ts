// Repository URLs, one set of rules for every place that reads one: the sourceRepos check (api,
// sync, explain), credential selection and checkouts (repo service), and write-time validation of
// credentials and Applications. Comparison follows Argo CD's git.NormalizeGitURL / SameURL;
// validation refuses anything git or ssh could read as an option or a transport helper.

const SSH_URL = /^(ssh:\/\/)?([^/:]*?)@[^@]+$/;
const SCP_LIKE = /^([^/:@]+@)?([^/:]+):(?!\/\/)(.+)$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f\s]/;

/** Argo CD's IsSSHURL: `ssh://…` or `user@host:path` (an `https://user@host` URL is not SSH). */
export function isSshUrl(url: string): boolean {
  const trimmed = url.trim();
  return trimmed.startsWith('ssh://') || SSH_URL.test(trimmed);
}

/**
 * The comparison form of a repository URL, Argo CD's NormalizeGitURL: trimmed, lower-cased,
 * scp-like SSH (`git@host:org/repo`) written as a path, without a trailing `/` or `.git`, and
 * without the `ssh://` scheme. Equal forms name the same repository. Capstan also drops trailing
 * slashes (`https://h/org/repo/` is `https://h/org/repo`), which Argo CD leaves distinct.
 */
export function normalizeRepoUrl(url: string): string {
  let repo = url.trim().toLowerCase();
  // Argo CD names a Helm OCI registry without a scheme; `oci://h/p` and `h/p` are one registry.
  if (repo.startsWith('oci://')) repo = repo.slice('oci://'.length);
  if (isSshUrl(repo) && !repo.startsWith('ssh://')) {
    // The first ':' of scp-like syntax separates host and path; as a path it cannot pass for a port.
    repo = `ssh://${repo.replace(':', '/')}`;
  }
  repo = repo.replace(/\/+$/, '');
  if (repo.endsWith('.git')) repo = repo.slice(0, -'.git'.length);
  return repo.startsWith('ssh://') ? repo.slice('ssh://'.length) : repo;
}

/** Argo CD's SameURL. */
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

export interface RepoUrlOptions {
  /** `file://` URLs read the service's own disk: only an operator may allow them (default off). */
  allowFileUrls?: boolean;
  /**
   * `oci://host/path` registries: Helm chart sources (`chart` set) and helm credentials only; git
   * never fetches them (default off).
   */
  allowOci?: boolean;
}

const startsWithDash = (part: string) => part.startsWith('-');

/** Host, user and path segments of a URL; none may begin with '-' (git and ssh read those as options). */
function componentProblem(parts: { user: string; host: string; path: string }): string | undefined {
  if (startsWithDash(decodeURIComponentSafe(parts.user))) return 'must not have a user beginning with "-"';
  if (startsWithDash(decodeURIComponentSafe(parts.host))) return 'must not have a host beginning with "-"';
  const segments = parts.path.split('/').map(decodeURIComponentSafe);
  if (segments.some(startsWithDash)) return 'must not have a path segment beginning with "-"';
  return undefined;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Why a repository URL must not be stored or fetched, or undefined when it may. Accepted: http(s)://,
 * ssh://, scp-like `user@host:path`, and file:// only when the operator allows it. Refused: empty,
 * whitespace or control characters, anything beginning with '-' (`--upload-pack=…`), git's transport
 * helpers (`ext::`, `fd::`, any `<helper>::`), a user, host or path segment beginning with '-'
 * (`ssh://-oProxyCommand=…`), and credentials inside the URL (they belong in a credential). The
 * description never quotes a password.
 */
export function repoUrlProblem(url: string, opts: RepoUrlOptions = {}): string | undefined {
  const trimmed = url.trim();
  if (!trimmed) return 'must not be empty';
  if (trimmed.length > 2048) return 'must be at most 2048 characters';
  if (CONTROL.test(trimmed)) return 'must not contain whitespace or control characters';
  if (trimmed.startsWith('-')) return 'must not begin with "-"';
  if (/^[a-z0-9+.-]*::/i.test(trimmed)) return 'must not name a git transport helper ("<helper>::")';
  if (/^file:/i.test(trimmed)) {
    if (!opts.allowFileUrls)
      return 'must not be a file:// URL (the operator has not allowed local repositories)';
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      return `is not a valid URL: ${redactRepoUrl(trimmed)}`;
    }
    if (parsed.host) return 'must be file:///absolute/path';
    return componentProblem({ user: '', host: '', path: parsed.pathname });
  }
  if (/^oci:\/\//i.test(trimmed)) {
    if (!opts.allowOci)
      return 'must not be an oci:// URL here (OCI registries hold Helm charts: name the chart in spec.source.chart)';
    return ociUrlProblem(trimmed);
  }
  if (/^(https?|ssh):\/\//i.test(trimmed)) {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      return `is not a valid URL: ${redactRepoUrl(trimmed)}`;
    }
    if (parsed.password) return 'must not carry a password; store it in the credential instead';
    if (parsed.username && parsed.protocol !== 'ssh:')
      return 'must not carry a username; store it in the credential instead';
    if (!parsed.hostname) return 'must name a host';
    // WHATWG URL lower-cases and re-encodes; the raw authority is what git and ssh would see.
    const authority = /^[a-z]+:\/\/([^/?#]*)/i.exec(trimmed)?.[1] ?? '';
    const at = authority.lastIndexOf('@');
    return componentProblem({
      user: at >= 0 ? authority.slice(0, at) : '',
      host: at >= 0 ? authority.slice(at + 1) : authority,
      path: parsed.pathname,
    });
  }
  const scp = SCP_LIKE.exec(trimmed);
  if (scp) {
    return componentProblem({
      user: (scp[1] ?? '').replace(/@$/, ''),
      host: scp[2] ?? '',
      path: scp[3] ?? '',
    });
  }
  return `must be an http(s)://, ssh:// or user@host:path URL, got ${redactRepoUrl(trimmed)}`;
}

/** An `oci://host[:port]/path` registry URL: a host, no userinfo, query or fragment. */
function ociUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    // WHATWG URL leaves a custom scheme's authority unparsed: read it as https, the transport.
    parsed = new URL(`https://${url.slice('oci://'.length)}`);
  } catch {
    return `is not a valid URL: ${redactRepoUrl(url)}`;
  }
  if (parsed.username || parsed.password)
    return 'must not carry a username or password; store them in the credential instead';
  if (!parsed.hostname) return 'must name a host';
  if (parsed.search || parsed.hash) return 'must not have a query or fragment';
  return componentProblem({ user: '', host: parsed.hostname, path: parsed.pathname });
}

/** Where git connects for a repository URL: what the repo service's egress check resolves. */
export interface RepoEndpoint {
  transport: 'http' | 'https' | 'ssh';
  /** Host name or IP address as written (IPv6 without brackets). */
  host: string;
  port: number;
}

/**
 * The host and port git would connect to for `url` (http(s)://, ssh://, scp-like `user@host:path`);
 * undefined for file:// and anything repoUrlProblem refuses. Ports default as git's do.
 */
export function repoEndpoint(url: string): RepoEndpoint | undefined {
  const trimmed = url.trim();
  if (/^(https?|ssh):\/\//i.test(trimmed)) {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      return undefined;
    }
    const transport = parsed.protocol.slice(0, -1).toLowerCase() as RepoEndpoint['transport'];
    const fallback = { http: 80, https: 443, ssh: 22 }[transport];
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    return host ? { transport, host, port: parsed.port ? Number(parsed.port) : fallback } : undefined;
  }
  if (/^oci:\/\//i.test(trimmed)) {
    // helm speaks HTTPS to a registry (plain HTTP only when the credential forces it).
    const inner = repoEndpoint(`https://${trimmed.slice('oci://'.length)}`);
    return inner && { ...inner, transport: 'https' };
  }
  if (/^file:/i.test(trimmed)) return undefined;
  const scp = SCP_LIKE.exec(trimmed);
  return scp?.[2] ? { transport: 'ssh', host: scp[2].replace(/^\[(.*)\]$/, '$1'), port: 22 } : undefined;
}
