// What the webhook checks a delivery against, live: each provider's secret and the body bound. An
// applied argocd-secret (sealed values) and argocd-cm (webhook.maxPayloadSizeMB) override what the
// api started with, unless a flag or the environment pinned the setting (the precedence of every
// setting); read at most every 2 s and shared by concurrent deliveries, so a flood costs no queries.
import type { Kysely } from 'kysely';
import type { Keyring } from '@capstan/sealing';
import { argoOverlay } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { readSealedValues } from '../settings/settings-secrets.js';
import { PROVIDERS, SECRET_KEY, type Provider } from './providers.js';

export interface WebhookSettings {
  /** Each provider's secret as the api started with it ('' when none). */
  secrets: Partial<Record<Provider, string>>;
  maxPayloadSizeMB: number;
  allowUnsigned: boolean;
  /** Settings a flag or the environment gave: applied objects do not override them. */
  pinned: ReadonlySet<string>;
  ratePerAddress: number;
  burst: number;
  perRepositoryPerMinute: number;
  maxInFlight: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  secrets: {},
  maxPayloadSizeMB: 10,
  allowUnsigned: false,
  pinned: new Set(),
  ratePerAddress: 10,
  burst: 50,
  perRepositoryPerMinute: 60,
  maxInFlight: 8,
};

export interface EffectiveWebhookConfig {
  secrets: Record<Provider, string>;
  maxPayloadBytes: number;
}

const MAX_PAYLOAD_MB = 50;

export class WebhookConfig {
  private cached: { at: number; value: Promise<EffectiveWebhookConfig> } | undefined;

  constructor(
    private readonly deps: { db: Kysely<ApiDatabase>; keyring: Keyring },
    readonly settings: WebhookSettings,
    private readonly ttlMs = 2000,
  ) {}

  current(): Promise<EffectiveWebhookConfig> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= this.ttlMs) {
      const value = this.load();
      // A failed read is not cached: the next delivery tries again.
      value.catch(() => (this.cached = undefined));
      this.cached = { at: now, value };
    }
    return this.cached.value;
  }

  /** Forget the cached values (this replica applied settings). */
  forget(): void {
    this.cached = undefined;
  }

  private async load(): Promise<EffectiveWebhookConfig> {
    const s = this.settings;
    const applied = await readSealedValues(this.deps.db, this.deps.keyring, 'argocd-secret');
    const secrets = {} as Record<Provider, string>;
    for (const p of PROVIDERS) {
      const key = SECRET_KEY[p];
      secrets[p] = (!s.pinned.has(key) ? applied.get(key) : undefined) ?? s.secrets[p] ?? '';
    }
    let mb = s.maxPayloadSizeMB;
    if (!s.pinned.has('webhook.max-payload-size-mb')) {
      const cm = await this.deps.db
        .withSchema('api')
        .selectFrom('settings')
        .select('data')
        .where('object', '=', 'argocd-cm')
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
      const v = cm
        ? argoOverlay({ 'argocd-cm': cm.data }, 'api').get('webhook.max-payload-size-mb')
        : undefined;
      // Checked as an integer when applied; bounded here like the setting.
      if (v && typeof v.value === 'number' && v.value >= 1) mb = Math.min(v.value, MAX_PAYLOAD_MB);
    }
    return { secrets, maxPayloadBytes: mb * 1024 * 1024 };
  }
}
