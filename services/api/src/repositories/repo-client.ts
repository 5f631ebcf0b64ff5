// The repo service over its internal gRPC contract (capstan.repo.v1.RepoService), over mutual TLS:
// the api presents its own service identity and, for the user it authenticated, a delegation it
// mints for this call (holder api, audience repo), which the repo service verifies and records in
// its credential audit rows. A caller that is not a user gets no delegation (repo refuses it).
import type { Metadata } from '@grpc/grpc-js';
import { peerError, type ServiceClient } from '@capstan/service-identity';
import type { Principal } from '../auth/principal.js';
import { API_SERVICE, type Delegations } from '../auth/delegations.js';
import { repov1, unary, type apiv1 } from '@capstan/proto';
import { askPeerSettings } from '../settings/settings-view.js';
import type { RepositoryInput } from '../apply/manifests.js';
import type { RepoBackend, RepositoryView, SecretApplyOutcome } from './repositories.service.js';

/** The repo service's answer keeps its code and message (they never hold secrets); the rest is "unavailable". */
/** A rejection handler: the peer's refusal as a CapstanError (one mapping, @capstan/service-identity's). */
const remote = (err: unknown): never => {
  throw peerError(err, 'repo');
};

function view(c: repov1.Credential | undefined): RepositoryView {
  return {
    repo: c?.repo ?? '',
    project: c?.project ?? '',
    type: c?.type ?? 'git',
    name: c?.displayName ?? '',
    username: c?.username ?? '',
    hasPassword: c?.hasPassword ?? false,
    hasSshPrivateKey: c?.hasSshPrivateKey ?? false,
    insecure: c?.insecure ?? false,
    secretName: c?.name ?? '',
    enableOci: c?.enableOci ?? false,
    insecureOciForceHttp: c?.insecureOciForceHttp ?? false,
  };
}

export class GrpcRepoBackend implements RepoBackend {
  private readonly client: repov1.RepoServiceClient;

  constructor(
    address: string,
    private readonly identity: ServiceClient,
    private readonly delegations: Delegations,
  ) {
    this.client = new repov1.RepoServiceClient(address, identity.credentials);
  }

  private async md(caller: Principal): Promise<Metadata> {
    return this.identity.metadata(await this.delegations.forRequest(caller, API_SERVICE, 'repo'));
  }

  settings(showSource: boolean): Promise<apiv1.SettingEntry[]> {
    return askPeerSettings(
      this.client.settings.bind(this.client),
      this.identity.metadata(),
      'repo',
      showSource,
    );
  }

  async create(caller: Principal, input: RepositoryInput, upsert: boolean): Promise<RepositoryView> {
    const res = await unary(
      this.client.createCredential.bind(this.client),
      repov1.CreateCredentialRequest.fromPartial({
        credential: {
          repo: input.repo,
          project: input.project,
          type: input.type,
          displayName: input.name,
          username: input.username,
          password: input.password,
          sshPrivateKey: input.sshPrivateKey,
          insecure: input.insecure,
          enableOci: input.enableOci ?? false,
          insecureOciForceHttp: input.insecureOciForceHttp ?? false,
        },
        upsert,
      }),
      { metadata: await this.md(caller) },
    ).catch(remote);
    return view(res.credential);
  }

  async applySecret(
    caller: Principal,
    manifest: unknown,
    opts: { dryRun: boolean; expectedId?: string },
  ): Promise<SecretApplyOutcome> {
    const res = await unary(
      this.client.applyCredentialSecret.bind(this.client),
      {
        manifestJson: JSON.stringify(manifest),
        dryRun: opts.dryRun,
        ...(opts.expectedId !== undefined ? { expectedId: opts.expectedId } : {}),
      },
      { metadata: await this.md(caller) },
    ).catch(remote);
    return {
      credential: res.credential ? view(res.credential) : null,
      id: res.credential?.id ?? '',
      outcome: res.outcome === 'configured' ? 'configured' : 'created',
    };
  }

  async get(caller: Principal, repo: string, project: string): Promise<RepositoryView> {
    const res = await unary(
      this.client.getCredential.bind(this.client),
      { repo, project },
      { metadata: await this.md(caller) },
    ).catch(remote);
    return view(res.credential);
  }

  async list(caller: Principal, project: string): Promise<RepositoryView[]> {
    const res = await unary(this.client.listCredentials.bind(this.client), project ? { project } : {}, {
      metadata: await this.md(caller),
    }).catch(remote);
    return res.credentials.map(view);
  }

  async delete(caller: Principal, repo: string, project: string): Promise<void> {
    await unary(
      this.client.deleteCredential.bind(this.client),
      { repo, project },
      { metadata: await this.md(caller) },
    ).catch(remote);
  }

  close(): void {
    this.client.close();
  }
}
