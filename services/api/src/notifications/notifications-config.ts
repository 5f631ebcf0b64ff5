// The notifications configuration in force: argocd-notifications-cm as applied, else as given as a
// file at start (settings/objects-in-force.ts), read with @capstan/policy's readNotificationsConfig
// (the reading apply checked it with), its services' `$key` references resolved from
// argocd-notifications-secret (applied: kept sealed, settings-secrets.ts; else its file). Read at
// most every 2 s (applied changes take effect within that, on every replica).
import type { Keyring } from '@capstan/sealing';
import { readNotificationsConfig, type NotificationService, type NotificationsConfig } from '@capstan/policy';
import type { ArgoObjectsInForce } from '../settings/objects-in-force.js';

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

  constructor(private readonly deps: { objects: ArgoObjectsInForce; keyring: Keyring }) {}

  /** The configuration in force (empty when argocd-notifications-cm was neither applied nor given). */
  async current(): Promise<NotificationsConfig> {
    if (this.cached && Date.now() - this.cached.at < REFRESH_MS) return this.cached.config;
    const { objects, keyring } = this.deps;
    const config = readNotificationsConfig((await objects.data('argocd-notifications-cm')) ?? {});
    const secrets = await objects.secrets(keyring, 'argocd-notifications-secret');
    for (const [name, s] of config.services) config.services.set(name, resolveService(s, secrets));
    this.cached = { at: Date.now(), config };
    return config;
  }

  /** Forgets the cached configuration (an apply on this replica). */
  forget(): void {
    this.cached = undefined;
  }
}
