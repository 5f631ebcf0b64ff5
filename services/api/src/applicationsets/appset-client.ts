// The appset service over its internal gRPC contract (capstan.appset.v1.AppSetService), over mutual
// TLS: the api presents its own service identity and a delegation for the user it authenticated
// (holder api, audience appset); with each call that generates or writes it also hands appset the
// delegations appset needs to call back as that same user (holder appset: audience api for
// ApplicationSetWritesService, audience repo for the git generators), so generation reads and writes
// only what the user may. A caller that is not a user gets no delegation (appset refuses it).
import type { Metadata } from '@grpc/grpc-js';
import { peerError, type ServiceClient } from '@capstan/service-identity';
import { appsetv1, unary, type apiv1 } from '@capstan/proto';
import { askPeerSettings } from '../settings/settings-view.js';
import { UnavailableError } from '@capstan/service';
import type { Principal } from '../auth/principal.js';
import { API_SERVICE, type Delegations } from '../auth/delegations.js';

export const APPSET_SERVICE = 'appset';

/** The appset service as the api sees it; `caller` is who the api proves to it. */
export interface AppSetBackend {
  upsert(
    caller: Principal,
    manifest: unknown,
    opts: { upsert: boolean; dryRun: boolean },
  ): Promise<appsetv1.ApplicationSetResult>;
  get(caller: Principal, namespace: string, name: string): Promise<appsetv1.ApplicationSetResult>;
  list(caller: Principal, namespace: string, selector: string): Promise<string[]>;
  delete(caller: Principal, namespace: string, name: string): Promise<appsetv1.DeleteResponse>;
  generate(caller: Principal, manifest: unknown): Promise<appsetv1.ApplicationSetResult>;
  /** The peer's effective settings (`capstan admin settings`); absent when the peer is not configured. */
  settings?(showSource: boolean): Promise<apiv1.SettingEntry[]>;
}

/** Without appset.address every ApplicationSet call answers UNAVAILABLE, saying which setting is missing. */
export class UnconfiguredAppSetBackend implements AppSetBackend {
  readonly unconfigured = true;
  private fail(): never {
    throw new UnavailableError('the appset service is not configured (appset.address)');
  }
  upsert(): Promise<appsetv1.ApplicationSetResult> {
    this.fail();
  }
  get(): Promise<appsetv1.ApplicationSetResult> {
    this.fail();
  }
  list(): Promise<string[]> {
    this.fail();
  }
  delete(): Promise<appsetv1.DeleteResponse> {
    this.fail();
  }
  generate(): Promise<appsetv1.ApplicationSetResult> {
    this.fail();
  }
}

/** A rejection handler: the peer's refusal as a CapstanError (one mapping, @capstan/service-identity's). */
const remote = (err: unknown): never => {
  throw peerError(err, APPSET_SERVICE);
};

export class GrpcAppSetBackend implements AppSetBackend {
  private readonly client: appsetv1.AppSetServiceClient;

  constructor(
    address: string,
    private readonly identity: ServiceClient,
    private readonly delegations: Delegations,
  ) {
    this.client = new appsetv1.AppSetServiceClient(address, identity.credentials);
  }

  settings(showSource: boolean): Promise<apiv1.SettingEntry[]> {
    return askPeerSettings(
      this.client.settings.bind(this.client),
      this.identity.metadata(),
      APPSET_SERVICE,
      showSource,
    );
  }

  private async md(caller: Principal): Promise<Metadata> {
    return this.identity.metadata(await this.delegations.forRequest(caller, API_SERVICE, APPSET_SERVICE));
  }

  /** What appset presents when it calls back the api and the repo service as this caller. */
  private async callerDelegations(caller: Principal): Promise<appsetv1.CallerDelegations> {
    const [api, repo] = await Promise.all([
      this.delegations.forRequest(caller, APPSET_SERVICE, API_SERVICE),
      this.delegations.forRequest(caller, APPSET_SERVICE, 'repo'),
    ]);
    return { api: api ?? '', repo: repo ?? '' };
  }

  async upsert(
    caller: Principal,
    manifest: unknown,
    opts: { upsert: boolean; dryRun: boolean },
  ): Promise<appsetv1.ApplicationSetResult> {
    return unary(
      this.client.upsert.bind(this.client),
      {
        manifestJson: JSON.stringify(manifest),
        upsert: opts.upsert,
        dryRun: opts.dryRun,
        delegations: await this.callerDelegations(caller),
      },
      { metadata: await this.md(caller) },
    ).catch(remote);
  }

  async get(caller: Principal, namespace: string, name: string): Promise<appsetv1.ApplicationSetResult> {
    return unary(
      this.client.get.bind(this.client),
      { name, namespace },
      { metadata: await this.md(caller) },
    ).catch(remote);
  }

  async list(caller: Principal, namespace: string, selector: string): Promise<string[]> {
    const res = await unary(
      this.client.list.bind(this.client),
      { namespace, selector },
      { metadata: await this.md(caller) },
    ).catch(remote);
    return res.applicationSetsJson;
  }

  async delete(caller: Principal, namespace: string, name: string): Promise<appsetv1.DeleteResponse> {
    return unary(
      this.client.delete.bind(this.client),
      { name, namespace, delegations: await this.callerDelegations(caller) },
      { metadata: await this.md(caller) },
    ).catch(remote);
  }

  async generate(caller: Principal, manifest: unknown): Promise<appsetv1.ApplicationSetResult> {
    return unary(
      this.client.generate.bind(this.client),
      { manifestJson: JSON.stringify(manifest), delegations: await this.callerDelegations(caller) },
      { metadata: await this.md(caller) },
    ).catch(remote);
  }

  close(): void {
    this.client.close();
  }
}
