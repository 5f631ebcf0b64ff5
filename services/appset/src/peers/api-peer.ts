// The api, as the appset service calls it over mutual TLS with its own service token: the
// ApplicationSetWritesService (pre-generate check, the all-or-nothing apply of generated
// Applications, the clusters a caller may see) and the DelegationService (owner of a set, owner
// delegations for background reconciles). Every call carries a delegation: the caller's (minted by
// the api for this request) or the set owner's (re-checked by the api when issued).
import { apiv1, unary } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import type { ClusterInfo } from '@capstan/appset-engine';

export type Verdict = apiv1.GeneratedApplicationVerdict;

export interface ApplyRequest {
  applicationSet: string;
  applicationsJson: string[];
  dryRun: boolean;
  allowUpdate: boolean;
  deleteMissing: boolean;
  deleteAll: boolean;
  preserveResources: boolean;
}

/** What the flows need from the api (an interface, so the flows' tests can use a real api or not). */
export interface ApiPeer {
  checkInputs(
    delegation: string,
    req: { applicationSet: string; repoUrls: string[]; readsClusters: boolean },
  ): Promise<{ allowed: boolean; reason: string }>;
  apply(delegation: string, req: ApplyRequest): Promise<{ verdicts: Verdict[]; applied: boolean }>;
  listClusters(delegation: string): Promise<ClusterInfo[]>;
  recordOwner(delegation: string, resource: string): Promise<string>;
  /** Owner delegation for `audience`, held by appset; no user delegation needed (the api decides). */
  issueOwnerDelegation(
    resource: string,
    audience: 'api' | 'repo',
  ): Promise<{ delegation: string; owner: string }>;
  close(): void;
}

const TIMEOUT_MS = 60_000;

export function grpcApiPeer(address: string, identity: ServiceClient): ApiPeer {
  const writes = new apiv1.ApplicationSetWritesServiceClient(address, identity.credentials);
  const delegations = new apiv1.DelegationServiceClient(address, identity.credentials);
  const opts = (delegation?: string) => ({ metadata: identity.metadata(delegation), timeoutMs: TIMEOUT_MS });
  return {
    checkInputs: (delegation, req) =>
      fromPeer('api', () => unary(writes.checkInputs.bind(writes), req, opts(delegation))),
    apply: (delegation, req) =>
      fromPeer('api', async () => {
        const res = await unary(writes.apply.bind(writes), req, opts(delegation));
        return { verdicts: res.applications, applied: res.applied };
      }),
    listClusters: (delegation) =>
      fromPeer('api', async () => {
        const res = await unary(writes.listClusters.bind(writes), {}, opts(delegation));
        return res.clusters.map((c) => ({
          name: c.name,
          server: c.server,
          ...(c.project ? { project: c.project } : {}),
          labels: c.labels,
          annotations: c.annotations,
        }));
      }),
    recordOwner: (delegation, resource) =>
      fromPeer('api', async () => {
        const res = await unary(delegations.recordOwner.bind(delegations), { resource }, opts(delegation));
        return res.owner;
      }),
    issueOwnerDelegation: (resource, audience) =>
      fromPeer('api', () =>
        unary(delegations.issueOwnerDelegation.bind(delegations), { resource, audience }, opts()),
      ),
    close: () => {
      writes.close();
      delegations.close();
    },
  };
}
