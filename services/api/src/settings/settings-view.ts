// `capstan admin settings [--show-source]`: every applied key of Argo CD's configuration objects
// (what it sets in which service, or that Capstan does not implement it) and the api's own effective
// settings with where each came from. Secret values are never shown: set or unset.
import { argoKeySpec, isSensitiveArgoKey } from '@capstan/policy';
import { envNameOf, type ConfigReport, type Settings } from '@capstan/service';
import type { AppliedObject, SettingsService } from './settings.service.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';

export interface SettingView {
  /** `argocd-cm` for an applied key, `api` for the api's own setting. */
  scope: string;
  key: string;
  /** The value, `(set)` / `(unset)` for a secret. */
  value: string;
  /** default, file, env, flag, argocd-file, applied (with the detail when asked). */
  source: string;
  /** What the key does in Capstan: `sync: application.sync.impersonation.enabled (live)`, `not implemented: ...`. */
  effect: string;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function appliedViews(objects: readonly AppliedObject[], showSource: boolean): SettingView[] {
  const out: SettingView[] = [];
  for (const o of objects) {
    const source = showSource
      ? `applied ${o.object} v${o.version} by ${o.actor} at ${o.appliedAt.toISOString()}`
      : 'applied';
    const keys = [...Object.keys(o.data), ...o.sensitiveKeys].sort();
    for (const key of keys) {
      const spec = argoKeySpec(o.object, key);
      const effect = spec?.capstan
        ? `${spec.capstan.service}: ${spec.capstan.setting}${spec.capstan.live ? ' (live)' : ' (at next start)'}`
        : spec
          ? `not implemented: ${spec.note ?? ''}`
          : 'unknown key: ignored';
      out.push({
        scope: o.object,
        key,
        value: isSensitiveArgoKey(o.object, key) ? '(set)' : o.data[key]!,
        source,
        effect,
      });
    }
  }
  return out;
}

/** The api's own effective settings (secrets as set/unset) and their sources. */
export function ownViews(
  settings: Settings,
  config: Record<string, unknown>,
  report: ConfigReport | undefined,
  showSource: boolean,
): SettingView[] {
  return Object.entries(settings).map(([key, s]) => {
    const value = config[key];
    const src = report?.sources[key];
    return {
      scope: 'api',
      key,
      value: s.secret ? (value === '' || value === undefined ? '(unset)' : '(set)') : shown(value),
      source: src ? (showSource ? src.detail : src.kind) : 'unknown',
      effect: `environment ${envNameOf(key, s)}`,
    };
  });
}

/** The api's own settings as started: definitions, values and sources. */
export interface SettingsViewSource {
  settings: Settings;
  config: Record<string, unknown>;
  report?: ConfigReport;
}

export class SettingsView {
  constructor(
    private readonly deps: {
      authz: Authorizer;
      settings: SettingsService;
      own?: SettingsViewSource;
    },
  ) {}

  async get(ctx: RequestContext, showSource: boolean): Promise<SettingView[]> {
    await this.deps.authz.check(ctx.principal, 'settings', 'get', '*', ctx.via);
    const own = this.deps.own;
    return [
      ...appliedViews(await this.deps.settings.applied(), showSource),
      ...(own ? ownViews(own.settings, own.config, own.report, showSource) : []),
    ];
  }
}
