// The notifications configuration in force: the latest applied argocd-notifications-cm, read with
// @capstan/policy's readNotificationsConfig (the reading apply checked it with), its services' `$key`
// references resolved from argocd-notifications-secret (kept sealed, settings-secrets.ts). Read at
// most every 2 s (applied changes take effect within that, on every replica).
import type { Kysely } from 'kysely';
import type { Keyring } from '@capstan/sealing';
import { readNotificationsConfig, type NotificationService, type NotificationsConfig } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { readSealedValues } from '../settings/settings-secrets.js';

const REFRESH_MS = 2000;

/** Argo CD's `$key` (and `$key` inside a longer value): the secret's value; unknown keys stay as given. */
export function resolveSecretRefs(value: string, secrets: ReadonlyMap<string, string>): string {
  return value.replace(/\$([\w.-]+)/g, (whole, key: string) => secrets.get(key) ?? whole);
}

function resolveService(s: NotificationService, secrets: ReadonlyMap<string, string>): NotificationService {
  const r = (v: string) => resolveSecretRefs(v, secrets);
  switch (s.kind) {
    case 'webhook':
      return { ...s, url: r(s.url), headers: s.headers.map((h) => ({ name: h.name, value: r(h.value) })) };
    case 'slack':
      return { ...s, url: r(s.url) };
    case 'email':
      return {
        ...s,
        host: r(s.host),
        from: r(s.from),
        ...(s.username !== undefined ? { username: r(s.username) } : {}),
        ...(s.password !== undefined ? { password: r(s.password) } : {}),
      };
  }
}

export class NotificationsSettings {
  private cached: { at: number; config: NotificationsConfig } | undefined;

  constructor(private readonly deps: { db: Kysely<ApiDatabase>; keyring: Keyring }) {}

  /** The configuration in force (empty when argocd-notifications-cm was never applied). */
  async current(): Promise<NotificationsConfig> {
    if (this.cached && Date.now() - this.cached.at < REFRESH_MS) return this.cached.config;
    const row = await this.deps.db
      .withSchema('api')
      .selectFrom('settings')
      .select('data')
      .where('object', '=', 'argocd-notifications-cm')
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    const config = readNotificationsConfig(row?.data ?? {});
    const secrets = await readSealedValues(this.deps.db, this.deps.keyring, 'argocd-notifications-secret');
    for (const [name, s] of config.services) config.services.set(name, resolveService(s, secrets));
    this.cached = { at: Date.now(), config };
    return config;
  }

  /** Forgets the cached configuration (an apply on this replica). */
  forget(): void {
    this.cached = undefined;
  }
}
