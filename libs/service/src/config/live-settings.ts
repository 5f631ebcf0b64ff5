// The settings of a running service with the Argo CD objects applied through the api on top: the
// layer between the environment and the files given at start (flag > environment > applied >
// --argocd-config-dir > configuration file > default). A service builds one from its start-up
// configuration, hands it the latest applied objects (at start from its own store, then from each
// io.capstan.settings.changed.v1 event) and reads `get(key)` where it decides, so a change takes
// effect for the next decision without restart. A key given by flag or environment stays pinned: the
// applied value is reported as shadowed. Keys Argo CD reads only at start (argocd-cmd-params-cm) take
// effect at the next start, as in Argo CD.
import { argoOverlay, type ArgoConfigObject, type CapstanService } from '@capstan/policy';
import { setLogLevel, type Logger } from '../observability/logger.js';
import type { ConfigReport, ConfigSource, Settings } from './settings.js';

export type AppliedObjects = Partial<
  Record<ArgoConfigObject, { version: number; data: Record<string, string> }>
>;

export interface LiveChange {
  /** Settings whose effective value changed. */
  changed: string[];
  /** Applied values that a flag or the environment overrides. */
  shadowed: string[];
  /** Applied values this service cannot take (its own schema refused them), with why. */
  refused: { setting: string; message: string }[];
  /** Applied values of start-only keys, taken at the next start. */
  atNextStart: string[];
}

export class LiveSettings<C extends Record<string, unknown>> {
  private values: Record<string, unknown>;
  private sources: Record<string, ConfigSource>;
  private readonly listeners: ((change: LiveChange) => void)[] = [];
  private started = false;

  constructor(
    private readonly settings: Settings,
    private readonly startConfig: C,
    private readonly report: ConfigReport | undefined,
    private readonly service: CapstanService,
  ) {
    this.values = { ...startConfig };
    this.sources = { ...(report?.sources ?? {}) };
  }

  get<K extends keyof C & string>(key: K): C[K] {
    return this.values[key] as C[K];
  }

  sourceOf(key: string): ConfigSource | undefined {
    return this.sources[key];
  }

  onChange(listener: (change: LiveChange) => void): void {
    this.listeners.push(listener);
  }

  /** Takes the latest applied objects (the whole state, not a delta). */
  apply(objects: AppliedObjects): LiveChange {
    const data: Partial<Record<ArgoConfigObject, Record<string, string>>> = {};
    for (const [name, o] of Object.entries(objects)) data[name as ArgoConfigObject] = o.data;
    const overlay = argoOverlay(data, this.service);
    const change: LiveChange = { changed: [], shadowed: [], refused: [], atNextStart: [] };
    for (const key of Object.keys(this.settings)) {
      const pinned = this.report?.sources[key];
      const applied = overlay.get(key);
      if (pinned && (pinned.kind === 'flag' || pinned.kind === 'env')) {
        if (applied)
          change.shadowed.push(`${key} (${applied.from.join(', ')}) is overridden by ${pinned.detail}`);
        continue;
      }
      let next = this.startConfig[key];
      let source = this.report?.sources[key];
      if (applied) {
        if (this.started && !applied.live) {
          change.atNextStart.push(key);
          continue;
        }
        const parsed = this.settings[key]!.schema.safeParse(applied.value);
        if (!parsed.success) {
          change.refused.push({
            setting: key,
            message: parsed.error.issues.map((i) => i.message).join(', '),
          });
          continue;
        }
        next = parsed.data;
        const versions = applied.from.map(
          (f) => `${f} (applied v${objects[f.split(':')[0] as ArgoConfigObject]?.version ?? '?'})`,
        );
        source = { kind: 'applied', detail: versions.join(', ') };
      }
      if (JSON.stringify(next) !== JSON.stringify(this.values[key])) change.changed.push(key);
      this.values[key] = next;
      if (source) this.sources[key] = source;
    }
    this.started = true;
    if (change.changed.length > 0) for (const l of this.listeners) l(change);
    return change;
  }
}

/** Logs what an applied change did, naming what did not take effect and why (never silent). */
export function logLiveChange(logger: Logger, change: LiveChange, live: { get(key: string): unknown }): void {
  for (const key of change.changed) {
    const value = live.get(key);
    // Maps (resource.customizations, kustomize.versions) are logged by name only: they can be long.
    const shown = value !== null && typeof value === 'object' ? '(map)' : value;
    logger.info({ setting: key, value: shown }, `setting ${key} applied`);
  }
  for (const s of change.shadowed) logger.warn({ setting: true }, `applied setting not in effect: ${s}`);
  for (const r of change.refused)
    logger.warn({ setting: r.setting }, `applied setting ${r.setting} refused: ${r.message}`);
  for (const k of change.atNextStart)
    logger.info({ setting: k }, `applied setting ${k} takes effect at the next start`);
}

/**
 * The service's log level follows log.level in force: argocd-cmd-params-cm's `<component>.log.level`
 * applied takes effect at once (and at start, when it was applied while the service was down),
 * unless a flag or the environment pinned it. Call after the first apply.
 */
export function followLogLevel(
  logger: Logger,
  live: { get(key: 'log.level'): unknown; onChange(listener: (change: LiveChange) => void): void },
): void {
  const set = () => {
    const level = String(live.get('log.level'));
    if (logger.level !== level) setLogLevel(logger, level);
  };
  set();
  live.onChange((change) => {
    if (change.changed.includes('log.level')) set();
  });
}
