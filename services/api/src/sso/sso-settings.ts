// The single sign-on configuration in force: the latest applied argocd-cm (`oidc.config`, `url`) and
// argocd-rbac-cm (`scopes`), read as Argo CD reads them (@capstan/policy), with the client secret
// that oidc.config names (`$oidc.clientSecret`) taken from an applied argocd-secret (kept sealed,
// settings/settings-secrets.ts) or else the api's secret setting auth.oidc-client-secret. Read again after 2 s, so an applied change is live on every replica.
import type { Kysely } from 'kysely';
import { FailedPreconditionError } from '@capstan/service';
import { readArgoValue, type OidcConfig } from '@capstan/policy';
import type { Keyring } from '@capstan/sealing';
import type { ApiDatabase } from '../support/db.table.js';
import { readSealedValue } from '../settings/settings-secrets.js';

const TTL_MS = 2000;
const SECRET_REF = '$oidc.clientSecret';

export interface SsoSettings {
  oidc: OidcConfig;
  /** argocd-cm `url`: the external URL of Capstan (the browser's redirect URI base); may be empty. */
  url: string;
  /** argocd-rbac-cm `scopes`: the ID token claims whose values are RBAC subjects. */
  scopes: string[];
  /** The resolved client secret of `oidc.clientID` (empty: a public client). */
  clientSecret: string;
}

async function latestData(db: Kysely<ApiDatabase>, object: string): Promise<Record<string, string>> {
  const row = await db
    .withSchema('api')
    .selectFrom('settings')
    .select('data')
    .where('object', '=', object)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
  return (row?.data as Record<string, string> | undefined) ?? {};
}

export class SsoSettingsSource {
  private cached: { at: number; value: SsoSettings | undefined } | undefined;

  constructor(
    private readonly db: Kysely<ApiDatabase>,
    private readonly clientSecretSetting: string,
    private readonly keyring?: Keyring,
  ) {}

  /** The settings in force, or undefined when argocd-cm has no (valid) oidc.config. */
  async current(): Promise<SsoSettings | undefined> {
    if (this.cached && Date.now() - this.cached.at < TTL_MS) return this.cached.value;
    const [cm, rbac] = await Promise.all([
      latestData(this.db, 'argocd-cm'),
      latestData(this.db, 'argocd-rbac-cm'),
    ]);
    const value = await this.read(cm, rbac);
    this.cached = { at: Date.now(), value };
    return value;
  }

  /** As current(), or FAILED_PRECONDITION naming what is missing. */
  async required(): Promise<SsoSettings> {
    const s = await this.current();
    if (!s)
      throw new FailedPreconditionError('single sign-on is not configured: argocd-cm has no oidc.config');
    return s;
  }

  private async read(
    cm: Record<string, string>,
    rbac: Record<string, string>,
  ): Promise<SsoSettings | undefined> {
    if (cm['oidc.config'] === undefined) return undefined;
    // Applied values passed checkArgoSettings; read again the same way.
    const oidc = readArgoValue('oidc-config', cm['oidc.config']);
    if (!('value' in oidc)) return undefined;
    const scopesRead = rbac.scopes === undefined ? undefined : readArgoValue('scopes', rbac.scopes);
    const config = oidc.value as OidcConfig;
    return {
      oidc: config,
      url: (cm.url ?? '').replace(/\/+$/, ''),
      scopes: scopesRead && 'value' in scopesRead ? (scopesRead.value as string[]) : ['groups'],
      clientSecret: await this.secretOf(config),
    };
  }

  /**
   * `$<key>`: the key of argocd-secret (applied, kept sealed), as Argo CD reads it; for
   * `$oidc.clientSecret`, else the api's auth.oidc-client-secret.
   */
  private async secretOf(config: OidcConfig): Promise<string> {
    if (!config.clientSecret) return '';
    const key = config.clientSecret.slice(1);
    const kept = this.keyring
      ? await readSealedValue(this.db, this.keyring, 'argocd-secret', key)
      : undefined;
    if (kept !== undefined) return kept;
    if (config.clientSecret === SECRET_REF && this.clientSecretSetting) return this.clientSecretSetting;
    throw new FailedPreconditionError(
      `oidc.config clientSecret names ${config.clientSecret}: apply argocd-secret with the key ${key}${config.clientSecret === SECRET_REF ? ' (or set auth.oidc-client-secret)' : ''}`,
    );
  }
}
