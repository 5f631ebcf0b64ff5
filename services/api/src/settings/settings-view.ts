// `capstan admin settings [--show-source]`: every applied key of Argo CD's configuration objects
// (what it sets in which service, or that Capstan does not implement it) and the api's own effective
// settings with where each came from. Secret values are never shown: set or unset.
import type { Metadata } from '@grpc/grpc-js';
import { unary, type apiv1, type UnaryMethod } from '@capstan/proto';
import { argoKeySpec, isSensitiveArgoKey } from '@capstan/policy';
import { peerError } from '@capstan/service-identity';
import { effectiveSettings, type ConfigReport, type Settings } from '@capstan/service';
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
  return effectiveSettings(
    'api',
    settings,
    { value: (key) => config[key], source: (key) => report?.sources[key] },
    showSource,
  );
}

/** The api's own settings as started: definitions, values and sources. */
export interface SettingsViewSource {
  settings: Settings;
  config: Record<string, unknown>;
  report?: ConfigReport;
}

/** How long the api waits for a peer's settings before it says the peer did not answer. */
export const PEER_SETTINGS_TIMEOUT_MS = 5_000;

/**
 * Asks a peer (sync, repo, appset) for its effective settings over its internal gRPC `Settings`, as
 * the api itself (no user delegation: the api checked `settings, get`), within the timeout.
 */
export async function askPeerSettings(
  method: UnaryMethod<apiv1.GetSettingsRequest, apiv1.GetSettingsResponse>,
  metadata: Metadata,
  peer: string,
  showSource: boolean,
): Promise<apiv1.SettingEntry[]> {
  try {
    return (await unary(method, { showSource }, { metadata, timeoutMs: PEER_SETTINGS_TIMEOUT_MS })).settings;
  } catch (err) {
    throw peerError(err, peer);
  }
}

/** A service that reports its own effective settings (sync, repo, appset over internal gRPC). */
export interface PeerSettingsSource {
  name: string;
  /** Absent when the peer is not configured. */
  settings?(showSource: boolean): Promise<SettingView[]>;
}

/** One row that says why a service's settings are not listed (not configured, did not answer). */
function missingPeer(name: string, why: string): SettingView {
  return { scope: name, key: '*', value: '', source: 'unavailable', effect: why };
}

async function peerViews(peer: PeerSettingsSource, showSource: boolean): Promise<SettingView[]> {
  if (!peer.settings) return [missingPeer(peer.name, `the ${peer.name} service is not configured`)];
  try {
    return await peer.settings(showSource);
  } catch (err) {
    return [missingPeer(peer.name, `the ${peer.name} service did not answer: ${(err as Error).message}`)];
  }
}

export class SettingsView {
  constructor(
    private readonly deps: {
      authz: Authorizer;
      settings: SettingsService;
      own?: SettingsViewSource;
      /** sync, repo and appset: each lists its own effective settings. */
      peers?: readonly PeerSettingsSource[];
    },
  ) {}

  async get(ctx: RequestContext, showSource: boolean): Promise<SettingView[]> {
    await this.deps.authz.check(ctx.principal, 'settings', 'get', '*', ctx.via);
    const own = this.deps.own;
    const peers = await Promise.all((this.deps.peers ?? []).map((p) => peerViews(p, showSource)));
    return [
      ...appliedViews(await this.deps.settings.applied(), showSource),
      ...(own ? ownViews(own.settings, own.config, own.report, showSource) : []),
      ...peers.flat(),
    ];
  }
}
