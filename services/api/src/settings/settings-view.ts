// `capstan admin settings [--show-source]`: every key of Argo CD's configuration objects in force
// (applied, or given as a file at start while no applied version replaces it; what it sets in which
// service, or that Capstan does not implement it) and the api's own settings in force (LiveSettings:
// start-up configuration with applied objects on top) with where each came from. Secret values are never shown: set or unset.
import type { Metadata } from '@grpc/grpc-js';
import { unary, type apiv1, type UnaryMethod } from '@capstan/proto';
import { argoKeySpec, isSensitiveArgoKey, type ArgoConfigObject } from '@capstan/policy';
import { peerError } from '@capstan/service-identity';
import { effectiveSettings, type ConfigSource, type Settings } from '@capstan/service';
import type { AppliedObject, SettingsService } from './settings.service.js';
import type { ArgoObjectsInForce } from './objects-in-force.js';
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

/** What a key does in Capstan: `sync: application.sync.impersonation.enabled (live)`, ... */
function effectOf(object: ArgoConfigObject, key: string): string {
  const spec = argoKeySpec(object, key);
  if (!spec) return 'unknown key: ignored';
  if (!spec.capstan) return `not implemented: ${spec.note ?? ''}`;
  return `${spec.capstan.service}: ${spec.capstan.setting}${spec.capstan.live ? ' (live)' : ' (at next start)'}`;
}

function objectViews(
  object: ArgoConfigObject,
  keys: readonly string[],
  value: (key: string) => string,
  source: string,
): SettingView[] {
  return [...keys].sort().map((key) => ({
    scope: object,
    key,
    value: isSensitiveArgoKey(object, key) ? '(set)' : value(key),
    source,
    effect: effectOf(object, key),
  }));
}

export function appliedViews(objects: readonly AppliedObject[], showSource: boolean): SettingView[] {
  return objects.flatMap((o) =>
    objectViews(
      o.object,
      [...Object.keys(o.data), ...o.sensitiveKeys],
      (key) => o.data[key]!,
      showSource
        ? `applied ${o.object} v${o.version} by ${o.actor} at ${o.appliedAt.toISOString()}`
        : 'applied',
    ),
  );
}

/** The keys of the objects given as files at start that no applied version replaced: in force too. */
export function fileViews(
  objects: readonly {
    object: ArgoConfigObject;
    data: Readonly<Record<string, string>>;
    files: readonly string[];
  }[],
  showSource: boolean,
): SettingView[] {
  return objects.flatMap((o) =>
    objectViews(
      o.object,
      Object.keys(o.data),
      (key) => o.data[key]!,
      showSource ? `argocd-file ${o.files.join(', ')}` : 'argocd-file',
    ),
  );
}

/** The api's own settings in force (secrets as set/unset) and their sources. */
export function ownViews(settings: Settings, live: SettingsReader, showSource: boolean): SettingView[] {
  return effectiveSettings(
    'api',
    settings,
    { value: (key) => live.get(key), source: (key) => live.sourceOf(key) },
    showSource,
  );
}

export interface SettingsReader {
  get(key: string): unknown;
  sourceOf(key: string): ConfigSource | undefined;
}

/** The api's own settings in force: definitions, values and sources (LiveSettings). */
export interface SettingsViewSource {
  settings: Settings;
  live: SettingsReader;
  /** Reads the applied objects again, so the answer is what is in force now. */
  refresh?(): Promise<void>;
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
      /** The objects given as files at start, shown while no applied version replaces them. */
      objects?: ArgoObjectsInForce;
      own?: SettingsViewSource;
      /** sync, repo and appset: each lists its own effective settings. */
      peers?: readonly PeerSettingsSource[];
    },
  ) {}

  async get(ctx: RequestContext, showSource: boolean): Promise<SettingView[]> {
    await this.deps.authz.check(ctx.principal, 'settings', 'get', '*', ctx.via);
    const own = this.deps.own;
    const [applied, files, peers] = await Promise.all([
      this.deps.settings.applied(),
      this.deps.objects?.fileObjects() ?? [],
      Promise.all((this.deps.peers ?? []).map((p) => peerViews(p, showSource))),
      own?.refresh?.(),
    ]);
    return [
      ...appliedViews(applied, showSource),
      ...fileViews(files, showSource),
      ...(own ? ownViews(own.settings, own.live, showSource) : []),
      ...peers.flat(),
    ];
  }
}
