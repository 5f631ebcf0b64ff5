// A stand-in for the appset service's AppSetService, for the api's own integration tests of the
// forwarding (the real appset service is driven end to end in test/e2e). It authenticates the api
// exactly as the real one must (mutual TLS, the api's token, a delegation for audience appset) and
// "generates" one Application per element of a list generator (name, project), then has the api
// decide and write them through ApplicationSetWritesService with the delegation the api handed it.
// It records what it received so tests can check the delegations.
import { Server, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { apiv1, appsetv1, unary } from '@capstan/proto';
import {
  authenticateCall,
  channelCredentials,
  DelegationVerifier,
  delegationPublicKeys,
  peerService,
  serverCredentials,
  ServiceTokens,
  type Delegation,
} from '@capstan/service-identity';
import type { TestPki } from '@capstan/test/infra';
import { APPSET_TOKEN, bearer } from './harness.js';

export const API_TO_APPSET_TOKEN = 'api-to-appset-token-for-tests-0123456789abcdef';

type Json = Record<string, unknown>;

export interface AppsetStandIn {
  address: string;
  /** Where the api listens (set once it has started). */
  apiAddress: string;
  sets: Map<string, Json>;
  /** The delegation each call carried, verified, and the CallerDelegations it handed over. */
  received: { method: string; delegation?: Delegation; callerDelegations?: appsetv1.CallerDelegations }[];
  stop(): Promise<void>;
}

const failure = (code: status, details: string) => Object.assign(new Error(details), { code, details });

function generate(manifest: Json): string[] {
  const spec = (manifest.spec ?? {}) as { generators?: { list?: { elements?: Json[] } }[] };
  const ns = ((manifest.metadata as Json).namespace as string | undefined) ?? 'argocd';
  return (spec.generators?.[0]?.list?.elements ?? []).map((e) =>
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: e.name, namespace: ns },
      spec: {
        project: e.project,
        source: { repoURL: `https://git.example.com/${String(e.project)}/apps.git`, path: e.name },
        destination: { server: 'https://kubernetes.default.svc', namespace: `${String(e.project)}-prod` },
      },
    }),
  );
}

export async function startAppsetStandIn(pki: TestPki): Promise<AppsetStandIn> {
  const auth = {
    tokens: new ServiceTokens(`api=${API_TO_APPSET_TOKEN}`),
    delegations: new DelegationVerifier(delegationPublicKeys(pki.delegation.publicKeyPem), 'appset'),
    requireCertificate: true,
  };
  const self: AppsetStandIn = {
    address: '',
    apiAddress: '',
    sets: new Map(),
    received: [],
    stop: async () => undefined,
  };
  const writes = () =>
    new apiv1.ApplicationSetWritesServiceClient(self.apiAddress, channelCredentials(pki.material('appset')));
  const applyAs = async (delegation: string, req: Partial<apiv1.ApplyGeneratedRequest>) => {
    const c = writes();
    const md = bearer(APPSET_TOKEN);
    md.set('capstan-delegation', delegation);
    try {
      return await unary(c.apply.bind(c), apiv1.ApplyGeneratedRequest.fromPartial(req), { metadata: md });
    } finally {
      c.close();
    }
  };
  const verdicts = (r: apiv1.ApplyGeneratedResponse) =>
    r.applications.map((v) => ({ ...v, applicationJson: '' }));
  const handle =
    <Req, Res>(method: string, run: (req: Req, d: Delegation | undefined) => Promise<Res>) =>
    (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>) => {
      authenticateCall(auth, call.metadata, peerService(call), ['api'], method)
        .then(async (id) => {
          const req = call.request as Req & { delegations?: appsetv1.CallerDelegations };
          self.received.push({
            method,
            ...(id.delegation ? { delegation: id.delegation } : {}),
            ...(req.delegations ? { callerDelegations: req.delegations } : {}),
          });
          cb(null, await run(req, id.delegation));
        })
        .catch((err: { code?: number; message: string }) =>
          cb(failure(typeof err.code === 'number' ? err.code : status.PERMISSION_DENIED, err.message)),
        );
    };
  const server = new Server();
  server.addService(appsetv1.AppSetServiceService, {
    upsert: handle<appsetv1.UpsertRequest, appsetv1.ApplicationSetResult>('Upsert', async (req) => {
      const manifest = JSON.parse(req.manifestJson) as Json;
      const meta = manifest.metadata as Json;
      const key = `${(meta.namespace as string | undefined) ?? 'argocd'}/${String(meta.name)}`;
      if (self.sets.has(key) && !req.upsert)
        throw failure(status.ALREADY_EXISTS, `applicationset ${key} already exists`);
      const res = await applyAs(req.delegations!.api, {
        applicationSet: key,
        applicationsJson: generate(manifest),
        dryRun: req.dryRun,
        allowUpdate: true,
        deleteMissing: true,
      });
      // As the real appset service: a refusal is the verdicts, with nothing stored (not an error).
      if (res.applications.some((v) => !v.allowed))
        return { applicationSetJson: JSON.stringify(manifest), applications: verdicts(res) };
      const stored = { ...manifest, metadata: { ...meta, namespace: key.split('/')[0] }, status: {} };
      if (!req.dryRun) self.sets.set(key, stored);
      return { applicationSetJson: JSON.stringify(stored), applications: verdicts(res) };
    }),
    get: handle<appsetv1.ApplicationSetRef, appsetv1.ApplicationSetResult>('Get', async (req) => {
      const set = self.sets.get(`${req.namespace || 'argocd'}/${req.name}`);
      if (!set) throw failure(status.NOT_FOUND, `applicationset ${req.name} not found`);
      return { applicationSetJson: JSON.stringify(set), applications: [] };
    }),
    list: handle<appsetv1.ListRequest, appsetv1.ListResponse>('List', async () => ({
      applicationSetsJson: [...self.sets.values()].map((s) => JSON.stringify(s)),
    })),
    delete: handle<appsetv1.DeleteRequest, appsetv1.DeleteResponse>('Delete', async (req) => {
      const key = `${req.namespace || 'argocd'}/${req.name}`;
      const res = await applyAs(req.delegations!.api, { applicationSet: key, deleteAll: true });
      if (!res.applied)
        throw failure(status.PERMISSION_DENIED, 'not allowed to delete every Application of the set');
      self.sets.delete(key);
      return { applications: verdicts(res) };
    }),
    generate: handle<appsetv1.GenerateRequest, appsetv1.ApplicationSetResult>('Generate', async (req) => {
      const manifest = JSON.parse(req.manifestJson) as Json;
      const meta = manifest.metadata as Json;
      const apps = generate(manifest);
      const res = await applyAs(req.delegations!.api, {
        applicationSet: `${(meta.namespace as string | undefined) ?? 'argocd'}/${String(meta.name)}`,
        applicationsJson: apps,
        dryRun: true,
        allowUpdate: true,
      });
      const byName = new Map(
        apps.map((a) => [(JSON.parse(a) as { metadata: { name: string } }).metadata.name, a]),
      );
      return {
        applicationSetJson: req.manifestJson,
        applications: res.applications.map((v) => ({ ...v, applicationJson: byName.get(v.name) ?? '' })),
      };
    }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', serverCredentials(pki.material('appset'), true), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  self.address = `127.0.0.1:${port}`;
  self.stop = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  return self;
}
