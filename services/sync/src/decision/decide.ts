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
} from '@capstan/policy';
import type { SyncInputs } from './sync-inputs.repository.js';
import {
  ManifestSourceError,
  type ManifestSource,
  type RenderedManifests,
} from '../manifests/manifest-source.js';
import { objectProblems } from '../apply/plan.js';

export interface DecisionSettings {
  impersonation: boolean;
  strict: boolean;
  controlNamespace: string;
  /** argocd-cm's system-level ignoreDifferences, before each Application's own (live). */
  systemIgnoreDifferences?: readonly IgnoreDifference[];
}

export interface SyncRequestData {
  operationId: string;
  application: { namespace: string; name: string };
  revision?: string | undefined;
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

export async function decideSync(
  inputs: SyncInputs,
  request: SyncRequestData,
  manifests: ManifestSource,
  settings: DecisionSettings,
  /** windows: false — the reconciler's reads, which sync windows do not govern. */
  options: { windows?: boolean } = {},
): Promise<Decided | EarlyRefusal> {
  const { namespace, name } = request.application;
  const raw = request.cascadeDelete?.application ?? inputs.application;
  if (raw === undefined)
    return { allowed: false, reason: `Application ${namespace}/${name} not found`, application: undefined };
  let application: Application;
  try {
    const decoded = decodeArgoObject(raw, `Application ${namespace}/${name}`);
    if (decoded.kind !== 'Application')
      throw new ManifestError(`Application ${namespace}/${name}`, [
        { path: 'kind', message: 'expected Application' },
      ]);
    application = decoded.value;
  } catch (err) {
    if (err instanceof ManifestError) return { allowed: false, reason: err.message, application: undefined };
    throw err;
  }
  const deleting = (application.metadata as { deletionTimestamp?: unknown }).deletionTimestamp;
  if (deleting && !request.cascadeDelete)
    return {
      allowed: false,
      reason: `Application ${namespace}/${name} is being deleted (since ${String(deleting)}): it is not synced`,
      application,
    };

  const projectRows = new Map(inputs.projects.map((r) => [r.name, r.manifest]));
  const decodedProjects = new Map<string, AppProject>();
  const lookup = (projectName: string): AppProject | undefined => {
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
  const clusters = new ClusterDirectory(inputs.clusters, { inCluster: false });

  let rendered: RenderedManifests;
  try {
    // A cascade deletion applies nothing (and prunes everything the Application applied).
    rendered = request.cascadeDelete
      ? { revision: null, objects: [] }
      : await manifests.render(application, request);
  } catch (err) {
    if (err instanceof ManifestSourceError) return { allowed: false, reason: err.message, application };
    throw err;
  }
  const problems = objectProblems(rendered.objects);
  if (problems.length > 0)
    return { allowed: false, reason: `invalid manifests: ${problems.join('; ')}`, application };

  const delivered: AppProject[] = [];
  for (const o of rendered.objects) {
    if (o.kind !== 'AppProject' || !o.apiVersion.startsWith('argoproj.io/')) continue;
    try {
      const d = decodeArgoObject(o, `delivered AppProject ${o.metadata.name}`);
      if (d.kind === 'AppProject') delivered.push(d.value);
    } catch (err) {
      if (err instanceof ManifestError) return { allowed: false, reason: err.message, application };
      throw err;
    }
  }

  const explainInput: ExplainSyncInput = {
    application,
    projects: lookup,
    clusters,
    impersonation: settings.impersonation,
    strict: settings.strict,
    controlNamespace: settings.controlNamespace,
    requireRegisteredCluster: true,
    // The projects' syncWindows (a cascade deletion is not a sync they govern, as in Argo CD).
    ...(request.cascadeDelete || options.windows === false
      ? {}
      : { now: new Date(), manual: request.automated !== true }),
  };
  try {
    const decision = explainSync({ ...explainInput, deliveredProjects: delivered });
    return { decision, application, rendered, clusters, explainInput };
  } catch (err) {
    if (err instanceof InvalidProjectError) return { allowed: false, reason: err.message, application };
    throw err;
  }
}

/** Second look, after discovery: each object's kind and namespace against the project chain. */
export function checkResources(
  decided: Decided,
  resources: NonNullable<ExplainSyncInput['resources']>,
): SyncDecision {
  return explainSync({ ...decided.explainInput, resources });
}
