// The single sign-on configuration in force: argocd-cm (`oidc.config`, `url`) and argocd-rbac-cm
// (`scopes`) as applied, else as given as files at start (settings/objects-in-force.ts), read as
// Argo CD reads them (@capstan/policy), with the client secret that oidc.config names
// (`$oidc.clientSecret`) taken from the argocd-secret in force (applied: kept sealed,
// settings/settings-secrets.ts; else its file) or else the api's secret setting
// auth.oidc-client-secret. Read again after 2 s, so an applied change is live on every replica.
import { FailedPreconditionError } from '@capstan/service';
import { readArgoValue, type OidcConfig } from '@capstan/policy';
import type { Keyring } from '@capstan/sealing';
import type { ArgoObjectsInForce } from '../settings/objects-in-force.js';

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

export class SsoSettingsSource {
  private cached: { at: number; value: SsoSettings | undefined } | undefined;

  constructor(
    private readonly objects: ArgoObjectsInForce,
    private readonly clientSecretSetting: string,
    private readonly keyring?: Keyring,
  ) {}

  /** The settings in force, or undefined when argocd-cm has no (valid) oidc.config. */
  async current(): Promise<SsoSettings | undefined> {
    if (this.cached && Date.now() - this.cached.at < TTL_MS) return this.cached.value;
    const [cm, rbac] = await Promise.all([
      this.objects.data('argocd-cm'),
      this.objects.data('argocd-rbac-cm'),
    ]);
    const value = await this.read(cm ?? {}, rbac ?? {});
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
    cm: Readonly<Record<string, string>>,
    rbac: Readonly<Record<string, string>>,
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
      ? (await this.objects.secrets(this.keyring, 'argocd-secret')).get(key)
      : undefined;
    if (kept !== undefined) return kept;
    if (config.clientSecret === SECRET_REF && this.clientSecretSetting) return this.clientSecretSetting;
    throw new FailedPreconditionError(
      `oidc.config clientSecret names ${config.clientSecret}: apply argocd-secret with the key ${key}${config.clientSecret === SECRET_REF ? ' (or set auth.oidc-client-secret)' : ''}`,
    );
  }
}
