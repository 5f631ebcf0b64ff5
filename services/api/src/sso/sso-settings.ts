// The single sign-on configuration in force: the latest applied argocd-cm (`oidc.config`, `url`) and
// argocd-rbac-cm (`scopes`), read as Argo CD reads them (@capstan/policy), with the client secret
// that oidc.config names (`$oidc.clientSecret`) taken from the api's secret setting
// auth.oidc-client-secret. Read again after 2 s, so an applied change is live on every replica.
import type { Kysely } from 'kysely';
import { FailedPreconditionError } from '@capstan/service';
import { readArgoValue, type OidcConfig } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';

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
  ) {}

  /** The settings in force, or undefined when argocd-cm has no (valid) oidc.config. */
  async current(): Promise<SsoSettings | undefined> {
    if (this.cached && Date.now() - this.cached.at < TTL_MS) return this.cached.value;
    const [cm, rbac] = await Promise.all([
      latestData(this.db, 'argocd-cm'),
      latestData(this.db, 'argocd-rbac-cm'),
    ]);
    const value = this.read(cm, rbac);
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

  private read(cm: Record<string, string>, rbac: Record<string, string>): SsoSettings | undefined {
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
      clientSecret: this.secretOf(config),
    };
  }

  private secretOf(config: OidcConfig): string {
    if (!config.clientSecret) return '';
    if (config.clientSecret !== SECRET_REF)
      throw new FailedPreconditionError(
        `oidc.config clientSecret names ${config.clientSecret}: the api holds only ${SECRET_REF} (auth.oidc-client-secret)`,
      );
    if (!this.clientSecretSetting)
      throw new FailedPreconditionError(
        `oidc.config clientSecret names ${SECRET_REF} but auth.oidc-client-secret (CAPSTAN_AUTH_OIDC_CLIENT_SECRET) is not set`,
      );
    return this.clientSecretSetting;
  }
}
