// A stand-in for the api's ApplicationSetWritesService and DelegationService in this package's
// integration tests (the real ones live in services/api; the end-to-end story runs against them).
// It keeps the contract's rules that the appset service relies on: verdicts per Application, all or
// nothing, dry runs write nothing, owned Applications, owner delegations refused when the test says
// the owner lost a right. Every call is recorded for the assertions.
import type { ClusterInfo } from '@capstan/appset-engine';
import { PermissionDeniedError } from '@capstan/service';
import type { ApiPeer, ApplyRequest, Verdict } from '../peers/api-peer.js';

export class ApiStandIn implements ApiPeer {
  readonly calls: { method: string; delegation?: string; request?: unknown }[] = [];
  /** Applications written, by set: name -> JSON. */
  readonly owned = new Map<string, Map<string, string>>();
  readonly owners = new Map<string, string>();
  /** Projects the acting user may not write to. */
  deniedProjects = new Set<string>();
  /** Refuse owner delegations (the owner was disabled). */
  ownerRevoked = false;
  clusters: ClusterInfo[] = [{ name: 'prod', server: 'https://prod.example.com', labels: { env: 'prod' } }];

  /** `mint`: makes real owner delegations (for tests against the real repo service). */
  constructor(private readonly mint?: (req: { resource: string; audience: string }) => Promise<string>) {}

  count(method: string, filter: (c: { request?: unknown }) => boolean = () => true): number {
    return this.calls.filter((c) => c.method === method && filter(c)).length;
  }

  checkInputs(
    delegation: string,
    request: { applicationSet: string; repoUrls: string[]; readsClusters: boolean },
  ) {
    this.calls.push({ method: 'checkInputs', delegation, request });
    return Promise.resolve({ allowed: true, reason: '' });
  }

  apply(delegation: string, req: ApplyRequest): Promise<{ verdicts: Verdict[]; applied: boolean }> {
    this.calls.push({ method: 'apply', delegation, request: req });
    const owned = this.owned.get(req.applicationSet) ?? new Map<string, string>();
    const verdicts: Verdict[] = [];
    const next = new Map(owned);
    const generated = req.applicationsJson.map(
      (j) => JSON.parse(j) as { metadata: { name: string; namespace: string }; spec: { project: string } },
    );
    for (const app of generated) {
      const action = !owned.has(app.metadata.name)
        ? 'create'
        : owned.get(app.metadata.name) === JSON.stringify(app)
          ? 'unchanged'
          : 'update';
      const allowed = !this.deniedProjects.has(app.spec.project);
      verdicts.push({
        name: app.metadata.name,
        namespace: app.metadata.namespace,
        project: app.spec.project,
        action,
        allowed,
        reason: allowed
          ? ''
          : `permission denied: applications, ${action}, ${app.spec.project}/${app.metadata.name}`,
      });
      if (action === 'create' || (action === 'update' && req.allowUpdate))
        next.set(app.metadata.name, JSON.stringify(app));
    }
    const names = new Set(generated.map((a) => a.metadata.name));
    for (const [name, json] of owned) {
      if (!(req.deleteAll || (req.deleteMissing && !names.has(name)))) continue;
      const project = (JSON.parse(json) as { spec: { project: string } }).spec.project;
      const allowed = !this.deniedProjects.has(project);
      verdicts.push({
        name,
        namespace: 'argocd',
        project,
        action: 'delete',
        allowed,
        reason: allowed ? '' : `permission denied: applications, delete, ${project}/${name}`,
      });
      next.delete(name);
    }
    const ok = verdicts.every((v) => v.allowed);
    if (ok && !req.dryRun) this.owned.set(req.applicationSet, next);
    return Promise.resolve({ verdicts, applied: ok && !req.dryRun });
  }

  listClusters(delegation: string): Promise<ClusterInfo[]> {
    this.calls.push({ method: 'listClusters', delegation });
    return Promise.resolve(this.clusters);
  }

  recordOwner(delegation: string, resource: string): Promise<string> {
    this.calls.push({ method: 'recordOwner', delegation, request: resource });
    this.owners.set(resource, delegation);
    return Promise.resolve('alice');
  }

  issueOwnerDelegation(resource: string, audience: 'api' | 'repo') {
    this.calls.push({ method: 'issueOwnerDelegation', request: { resource, audience } });
    if (this.ownerRevoked || !this.owners.has(resource))
      return Promise.reject(
        new PermissionDeniedError(`the owner of ${resource} may no longer act: account disabled`),
      );
    if (this.mint)
      return this.mint({ resource, audience }).then((delegation) => ({ delegation, owner: 'alice' }));
    return Promise.resolve({ delegation: `owner-${audience}`, owner: 'alice' });
  }

  close(): void {}
}
