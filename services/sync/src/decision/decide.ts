// The decision of one sync attempt: the Application, its project chain and the clusters from the
// read model (loaded by the caller, sync-inputs.repository.ts), the objects from the manifest source, all handed to explainSync from
// @capstan/policy (the very function `capstan sync explain` runs). The caller records the result
// in audit.sync_decisions before anything touches the cluster.
import type { IgnoreDifference } from '@capstan/diff';
import {
  ClusterDirectory,
  decodeArgoObject,
  explainSync,
  ManifestError,
  type ExplainSyncInput,
  type AppProject,
  type Application,
  type SyncDecision,
  type ResourceFilter,
} from '@capstan/policy';
import type { SyncInputs } from './sync-inputs.repository.js';
import {
  ManifestSourceError,
  type ManifestSource,
  type RenderedManifests,
} from '../manifests/manifest-source.js';
import { objectProblems } from '../apply/plan.js';
import type { SyncResource } from '../apply/selective.js';

export interface DecisionSettings {
  impersonation: boolean;
  strict: boolean;
  controlNamespace: string;
  /** argocd-cm's system-level ignoreDifferences, before each Application's own (live). */
  systemIgnoreDifferences?: readonly IgnoreDifference[];
  /** argocd-cm's resource.exclusions / resource.inclusions (live): excluded kinds are neither synced nor compared. */
  resourceFilter?: ResourceFilter;
}

export interface SyncRequestData {
  operationId: string;
  application: { namespace: string; name: string };
  revision?: string | undefined;
  /** A multi-source Application's revision per source (a rollback's, automation's). */
  revisions?: readonly string[] | undefined;
  dryRun: boolean;
  prune: boolean;
  /**
   * Cascade deletion of an Application the api deleted: its manifest as it was, so the decision
   * can be made although the read model no longer has it. The sync applies nothing and prunes all.
   */
  cascadeDelete?: { application: unknown } | undefined;
  /**
   * Queued by the automated trigger (a new revision), not asked for by a person: sync windows
   * with manualSync do not let it through.
   */
  automated?: boolean | undefined;
  /** Argo CD's selective sync (apply/selective.ts): only these resources; absent: all. */
  resources?: SyncResource[] | undefined;
}

/** A refusal before any decision could be computed (missing or invalid inputs). */
export interface EarlyRefusal {
  allowed: false;
  reason: string;
  application: Application | undefined;
}

export interface Decided {
  decision: SyncDecision;
  application: Application;
  rendered: RenderedManifests;
  clusters: ClusterDirectory;
  /** What the decision was computed from, for the resource checks after discovery. */
  explainInput: ExplainSyncInput;
}

class InvalidProjectError extends Error {}

/** A step's refusal: decideSync turns it into an EarlyRefusal naming the reason. */
class Refused extends Error {
  constructor(
    readonly reason: string,
    readonly application: Application | undefined,
  ) {
    super(reason);
  }
}

export async function decideSync(
  inputs: SyncInputs,
  request: SyncRequestData,
  manifests: ManifestSource,
  settings: DecisionSettings,
  /** windows: false — the reconciler's reads, which sync windows do not govern. */
  options: { windows?: boolean } = {},
): Promise<Decided | EarlyRefusal> {
  try {
    const application = applicationOf(inputs, request);
    const rendered = await renderFor(application, request, manifests);
    const clusters = new ClusterDirectory(inputs.clusters, { inCluster: false });
    const explainInput = explainInputOf(inputs, application, clusters, settings, {
      // The projects' syncWindows (a cascade deletion is not a sync they govern, as in Argo CD).
      windows: !request.cascadeDelete && options.windows !== false,
      manual: request.automated !== true,
    });
    const deliveredProjects = deliveredProjectsOf(rendered, application);
    try {
      const decision = explainSync({ ...explainInput, deliveredProjects });
      return { decision, application, rendered, clusters, explainInput };
    } catch (err) {
      if (err instanceof InvalidProjectError) throw new Refused(err.message, application);
      throw err;
    }
  } catch (err) {
    if (err instanceof Refused) return { allowed: false, reason: err.reason, application: err.application };
    throw err;
  }
}

function explainInputOf(
  inputs: SyncInputs,
  application: Application,
  clusters: ClusterDirectory,
  settings: DecisionSettings,
  when: { windows: boolean; manual: boolean },
): ExplainSyncInput {
  return {
    application,
    projects: projectLookup(inputs),
    clusters,
    impersonation: settings.impersonation,
    strict: settings.strict,
    controlNamespace: settings.controlNamespace,
    requireRegisteredCluster: true,
    ...(when.windows ? { now: new Date(), manual: when.manual } : {}),
  };
}

/**
 * Who a manual sync started now would write as, and why: the same inputs and explainSync as
 * decideSync, before rendering (the objects' own checks come at sync time, after discovery).
 */
export function explainNow(
  inputs: SyncInputs,
  app: { namespace: string; name: string },
  settings: DecisionSettings,
): SyncDecision | EarlyRefusal {
  const request = { operationId: 'explain', application: app, dryRun: true, prune: false };
  try {
    const application = applicationOf(inputs, request);
    const clusters = new ClusterDirectory(inputs.clusters, { inCluster: false });
    try {
      return explainSync(
        explainInputOf(inputs, application, clusters, settings, { windows: true, manual: true }),
      );
    } catch (err) {
      if (err instanceof InvalidProjectError) throw new Refused(err.message, application);
      throw err;
    }
  } catch (err) {
    if (err instanceof Refused) return { allowed: false, reason: err.reason, application: err.application };
    throw err;
  }
}

/** The Application to sync: the read model's (or a cascade deletion's own copy), decoded; not one being deleted. */
function applicationOf(inputs: SyncInputs, request: SyncRequestData): Application {
  const { namespace, name } = request.application;
  const raw = request.cascadeDelete?.application ?? inputs.application;
  if (raw === undefined) throw new Refused(`Application ${namespace}/${name} not found`, undefined);
  let application: Application;
  try {
    const decoded = decodeArgoObject(raw, `Application ${namespace}/${name}`);
    if (decoded.kind !== 'Application')
      throw new ManifestError(`Application ${namespace}/${name}`, [
        { path: 'kind', message: 'expected Application' },
      ]);
    application = decoded.value;
  } catch (err) {
    if (err instanceof ManifestError) throw new Refused(err.message, undefined);
    throw err;
  }
  const deleting = (application.metadata as { deletionTimestamp?: unknown }).deletionTimestamp;
  if (deleting && !request.cascadeDelete)
    throw new Refused(
      `Application ${namespace}/${name} is being deleted (since ${String(deleting)}): it is not synced`,
      application,
    );
  return application;
}

/** The project chain's projects by name, decoded once each and only when the chain reaches them. */
function projectLookup(inputs: SyncInputs): (projectName: string) => AppProject | undefined {
  const projectRows = new Map(inputs.projects.map((r) => [r.name, r.manifest]));
  const decodedProjects = new Map<string, AppProject>();
  return (projectName) => {
    const cached = decodedProjects.get(projectName);
    if (cached) return cached;
    const row = projectRows.get(projectName);
    if (row === undefined) return undefined;
    try {
      const d = decodeArgoObject(row, `project ${JSON.stringify(projectName)}`);
      if (d.kind !== 'AppProject')
        throw new InvalidProjectError(`project ${JSON.stringify(projectName)} is not an AppProject`);
      decodedProjects.set(projectName, d.value);
      return d.value;
    } catch (err) {
      if (err instanceof ManifestError) throw new InvalidProjectError(`${err.message}`);
      throw err;
    }
  };
}

/** The desired objects (none for a cascade deletion: it applies nothing and prunes everything), checked. */
async function renderFor(
  application: Application,
  request: SyncRequestData,
  manifests: ManifestSource,
): Promise<RenderedManifests> {
  let rendered: RenderedManifests;
  try {
    rendered = request.cascadeDelete
      ? { revision: null, objects: [] }
      : await manifests.render(application, request);
  } catch (err) {
    if (err instanceof ManifestSourceError) throw new Refused(err.message, application);
    throw err;
  }
  const problems = objectProblems(rendered.objects);
  if (problems.length > 0) throw new Refused(`invalid manifests: ${problems.join('; ')}`, application);
  return rendered;
}

/** AppProjects among the rendered objects: the projects this Application delivers. */
function deliveredProjectsOf(rendered: RenderedManifests, application: Application): AppProject[] {
  const delivered: AppProject[] = [];
  for (const o of rendered.objects) {
    if (o.kind !== 'AppProject' || !o.apiVersion.startsWith('argoproj.io/')) continue;
    try {
      const d = decodeArgoObject(o, `delivered AppProject ${o.metadata.name}`);
      if (d.kind === 'AppProject') delivered.push(d.value);
    } catch (err) {
      if (err instanceof ManifestError) throw new Refused(err.message, application);
      throw err;
    }
  }
  return delivered;
}

/** Second look, after discovery: each object's kind and namespace against the project chain. */
export function checkResources(
  decided: Decided,
  resources: NonNullable<ExplainSyncInput['resources']>,
): SyncDecision {
  return explainSync({ ...decided.explainInput, resources });
}
