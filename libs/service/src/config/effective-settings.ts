// What `capstan admin settings` shows of one service: each setting's effective value (a secret as
// set/unset only) and where it came from. One answer for every service: the api reads its own, and
// asks sync, repo and appset for theirs over their internal gRPC (SettingsService-shaped `Settings`).
import { envNameOf, type ConfigSource, type Settings } from './settings.js';

export interface EffectiveSetting {
  /** The service (`api`, `sync`, `repo`, `appset`). */
  scope: string;
  key: string;
  /** The value; `(set)` / `(unset)` for a secret. */
  value: string;
  /** default, file, env, flag, argocd-file, applied; in full (file, variable, version) with showSource. */
  source: string;
  /** How to set it: the environment variable. */
  effect: string;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function effectiveSettings(
  scope: string,
  settings: Settings,
  read: { value(key: string): unknown; source(key: string): ConfigSource | undefined },
  showSource: boolean,
): EffectiveSetting[] {
  return Object.entries(settings).map(([key, s]) => {
    const value = read.value(key);
    const src = read.source(key);
    return {
      scope,
      key,
      value: s.secret ? (value === '' || value === undefined ? '(unset)' : '(set)') : shown(value),
      source: src ? (showSource ? src.detail : src.kind) : 'unknown',
      effect: `environment ${envNameOf(key, s)}`,
    };
  });
}
