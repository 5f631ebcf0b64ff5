// Which Application sources a push concerns, as Argo CD's webhook decides it (util/webhook/webhook.go):
// the source's repoURL matches the payload's repository web URL with GetWebURLRegex (any of http(s),
// ssh or scp-like forms, an optional user, an optional `ssh.`/`altssh.` host prefix, an optional
// port and `.git` suffix, case-insensitive), and its targetRevision names the pushed ref
// (sourceRevisionHasChanged: HEAD or empty when the push touched the default branch, else the
// branch or tag name, with or without refs/heads/ or refs/tags/). Pure functions.

// Argo CD's usernameRegex (RFC 3986 userinfo as shadow-utils allows user names).
const USERNAME = String.raw`[\w.][\w.-]{0,30}[\w.$-]?`;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Argo CD's ParseRevision: the part after `refs/heads/` or `refs/tags/` (the third `/`-part on). */
export function parseRevision(ref: string): string {
  const parts = ref.split('/');
  return parts.length >= 3 ? parts.slice(2).join('/') : parts[parts.length - 1]!;
}

/** Argo CD's GetWebURLRegex; undefined when the web URL does not parse. */
export function webUrlRegex(webURL: string): RegExp | undefined {
  let url: URL;
  try {
    url = new URL(webURL);
  } catch {
    return undefined;
  }
  if (!url.hostname) return undefined;
  const host = escapeRegExp(url.hostname.replace(/^\[|\]$/g, ''));
  const path = escapeRegExp(url.pathname.replace(/^\//, ''));
  return new RegExp(
    `^((https?|ssh)://)?(${USERNAME}@)?((alt)?ssh\\.)?${host}(:\\d+)?[:/]${path}(\\.git)?$`,
    'i',
  );
}

// A targetRevision that is a semver constraint (Argo CD checks it with Masterminds/semver): Capstan
// does not evaluate constraints here; a tag push may move such a source, so it is refreshed.
const isConstraint = (t: string) => /[<>=~^*|,]|\s-\s/.test(t) || /(^|\.)[xX](\.|$)/.test(t);
const SEMVER_TAG = /^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** Argo CD's sourceRevisionHasChanged for one source's targetRevision. */
export function revisionMatches(targetRevision: string, revision: string, touchedHead: boolean): boolean {
  const target = parseRevision(targetRevision);
  if (target === 'HEAD' || target === '') return touchedHead;
  if (target === revision) return true;
  if (/^refs\/(heads|tags)\//.test(targetRevision)) return false;
  return isConstraint(targetRevision) && SEMVER_TAG.test(revision);
}

export interface SourceRef {
  repoURL: string;
  targetRevision: string;
}

/** The sources of an Application manifest (spec.source and spec.sources), as written. */
export function sourcesOf(manifest: unknown): SourceRef[] {
  const spec = (manifest as { spec?: { source?: unknown; sources?: unknown } } | null)?.spec;
  const raw = [spec?.source, ...(Array.isArray(spec?.sources) ? spec.sources : [])];
  const out: SourceRef[] = [];
  for (const s of raw) {
    const src = s as { repoURL?: unknown; targetRevision?: unknown } | undefined;
    if (!src || typeof src.repoURL !== 'string') continue;
    out.push({
      repoURL: src.repoURL,
      targetRevision: typeof src.targetRevision === 'string' ? src.targetRevision : '',
    });
  }
  return out;
}

export interface Push {
  /** The repository's web URLs from the payload (Bitbucket Server: its clone URLs). */
  webURLs: string[];
  /** The pushed ref's short name. */
  revision: string;
  /** Whether the push moved the default branch (Argo CD's touchedHead). */
  touchedHead: boolean;
}

/** The sources of one Application that this push concerns. */
export function affectedSources(push: Push, manifest: unknown): SourceRef[] {
  const regexes = push.webURLs.map(webUrlRegex).filter((r): r is RegExp => r !== undefined);
  return sourcesOf(manifest).filter(
    (s) =>
      s.repoURL.length <= 2048 &&
      regexes.some((r) => r.test(s.repoURL)) &&
      revisionMatches(s.targetRevision, push.revision, push.touchedHead),
  );
}
