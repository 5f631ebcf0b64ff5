// The api's own settings in force: its start-up configuration with the applied Argo CD objects on
// top, through LiveSettings (the mechanism the sync and repo services follow applied objects with).
// The api stores the objects itself, so it reads them from api.settings: after an apply on this
// replica at once, from other replicas within the refresh (2 s), and before `capstan admin
// settings` answers. It drives the api's log level (argocd-cmd-params-cm server.log.level) and what
// `capstan admin settings` shows of the api (rbac.default-role after an applied policy.default, ...).
import {
  commonSettings,
  followLogLevel,
  LiveSettings,
  logLiveChange,
  type AppliedObjects,
  type ServiceContext,
} from '@capstan/service';
import { isSensitiveArgoKey } from '@capstan/policy';
import type { ApiConfig } from '../api-service.js';
import { apiSettings } from '../settings.js';
import type { AppliedObject } from './settings.service.js';

const REFRESH_MS = 2000;

/**
 * Applied objects as LiveSettings takes them. Sensitive values are not in api.settings (they are
 * kept sealed and read by their users, the webhook and single sign-on): a set key stands as
 * `(sealed)`, so the view says set; nothing reads a secret from here.
 */
export function appliedObjectsOf(objects: readonly AppliedObject[]): AppliedObjects {
  const out: AppliedObjects = {};
  for (const o of objects) {
    const data: Record<string, string> = { ...o.data };
    for (const key of o.sensitiveKeys) if (isSensitiveArgoKey(o.object, key)) data[key] = '(sealed)';
    out[o.object] = { version: o.version, data };
  }
  return out;
}

export class LiveApiSettings {
  readonly live: LiveSettings<ApiConfig>;
  private stamp: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: ServiceContext<ApiConfig>,
    private readonly applied: () => Promise<AppliedObject[]>,
  ) {
    this.live = new LiveSettings({ ...commonSettings, ...apiSettings }, ctx.config, ctx.configReport, 'api');
  }

  /** Reads the applied objects once, then follows them. */
  async start(refreshMs = REFRESH_MS): Promise<void> {
    await this.refresh();
    followLogLevel(this.ctx.logger, this.live);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Applies the latest objects when they changed since the last read. */
  async refresh(): Promise<void> {
    const objects = await this.applied();
    const stamp = objects.map((o) => `${o.object}@${o.version}`).join(',');
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    logLiveChange(this.ctx.logger, this.live.apply(appliedObjectsOf(objects)), this.live);
  }
}
