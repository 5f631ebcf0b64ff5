// argocd-cm's `oidc.config` and argocd-rbac-cm's `scopes`, read as Argo CD reads them (the fields of
// Argo's OIDCConfig that Capstan's single sign-on uses; other fields of Argo's pass through). The
// client secret is never a literal here: it is `$oidc.clientSecret` (or another `$key`), resolved by
// the api from its secret settings, so an applied argocd-cm never holds a secret (docs/sso.md).
import { parse as parseYaml } from 'yaml';

export interface OidcConfig {
  name: string;
  issuer: string;
  clientID: string;
  /** `$<key>` reference, or empty for a public client. */
  clientSecret: string;
  /** The client the CLI logs in with (Argo CD's cliClientID); clientID when empty. */
  cliClientID: string;
  requestedScopes: string[];
  /** Argo's requestedIDTokenClaims (e.g. `groups: { essential: true }`), sent as the `claims` parameter. */
  requestedIDTokenClaims: Record<string, unknown> | undefined;
  logoutURL: string;
}

type Read<T> = { value: T } | { problem: string };

const str = (doc: Record<string, unknown>, key: string): string | { problem: string } => {
  const v = doc[key];
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : { problem: `${key}: must be a string` };
};

function httpUrlProblem(key: string, v: string): string | undefined {
  try {
    const u = new URL(v);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return `${key}: must be an http(s) URL`;
    if (u.search || u.hash) return `${key}: must not have a query or fragment`;
    return undefined;
  } catch {
    return `${key}: must be an http(s) URL, got ${JSON.stringify(v)}`;
  }
}

export function readOidcConfig(text: string): Read<OidcConfig> {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    return { problem: 'not valid YAML' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { problem: 'must be a map (issuer, clientID, clientSecret, ...)' };
  const d = doc as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const key of ['name', 'issuer', 'clientID', 'clientSecret', 'cliClientID', 'logoutURL']) {
    const v = str(d, key);
    if (typeof v !== 'string') return v;
    fields[key] = v;
  }
  if (!fields.issuer) return { problem: 'issuer: required' };
  const bad = httpUrlProblem('issuer', fields.issuer);
  if (bad) return { problem: bad };
  if (!fields.clientID) return { problem: 'clientID: required' };
  // Never quote the value back: it may be the secret itself.
  if (fields.clientSecret && !/^\$[A-Za-z0-9._-]+$/.test(fields.clientSecret))
    return {
      problem:
        'clientSecret: must reference a secret key (clientSecret: $oidc.clientSecret), never hold the secret itself',
    };
  const scopes = d.requestedScopes ?? ['openid', 'profile', 'email'];
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string' || /\s/.test(s)))
    return { problem: 'requestedScopes: must be a list of scope names' };
  const claims = d.requestedIDTokenClaims;
  if (claims !== undefined && (typeof claims !== 'object' || claims === null || Array.isArray(claims)))
    return { problem: 'requestedIDTokenClaims: must be a map of claim names' };
  return {
    value: {
      name: fields.name || 'SSO',
      issuer: fields.issuer.replace(/\/+$/, ''),
      clientID: fields.clientID,
      clientSecret: fields.clientSecret ?? '',
      cliClientID: fields.cliClientID ?? '',
      requestedScopes: (scopes as string[]).includes('openid')
        ? (scopes as string[])
        : ['openid', ...(scopes as string[])],
      requestedIDTokenClaims: claims as Record<string, unknown> | undefined,
      logoutURL: fields.logoutURL ?? '',
    },
  };
}

/** argocd-rbac-cm `scopes`: `[groups, email]` (a YAML list); Argo's default is `[groups]`. */
export function readScopes(text: string): Read<string[]> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return { problem: 'not valid YAML: expected a list such as [groups, email]' };
  }
  if (!Array.isArray(doc) || doc.some((s) => typeof s !== 'string' || s === ''))
    return { problem: `expected a list of claim names such as [groups, email], got ${JSON.stringify(text)}` };
  return { value: doc as string[] };
}
