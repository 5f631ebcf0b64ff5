// Step 3 of a sync attempt: order the objects (waves, hooks), work out how each is written and
// what prune may delete under the sync options, and check every write with the API server
// (pre-flight access reviews as the sync identity) before the first one.
import { compileIgnoreDifferences, type IgnoreDifference } from '@capstan/diff';
import { describeRef, planSync, PlanError, type ObjectRef, type SyncPlan } from '../../apply/plan.js';
import { preflight, pruneCandidates, type WriteVerb } from '../../apply/preflight.js';
import {
  deletionApproved,
  parseResourceSyncOptions,
  propagationOf,
  pruneMode,
  writeMode,
} from '../../apply/sync-options.js';
import { beforeWriteFor, unsupportedRespectEntries } from '../../apply/live-aware.js';
import type { ExecuteOptions } from '../../apply/execute.js';
import { isControlPlaneRef, isExcludedRef } from '../../delivery/control-plane-objects.js';
import { previousOperationEnd } from '../operations.repository.js';
import { StepFailed, type SyncAttempt } from '../sync-attempt.js';
import type { Connected } from './connect.js';

export interface Planned extends Connected {
  plan: SyncPlan;
  prune: boolean;
  previouslyApplied: ObjectRef[];
  /** Applied before, not declared now (what prune would delete). */
  stale: ObjectRef[];
  /** The sync options' part of executePlan's options. */
  execution: Pick<
    ExecuteOptions,
    'writeMode' | 'beforeWrite' | 'pruneMode' | 'pruneConfirmed' | 'propagationPolicy'
  >;
}

export async function planOperation(a: SyncAttempt, c: Connected): Promise<Planned | StepFailed> {
  let plan: SyncPlan;
  try {
    plan = planSync(c.objects);
  } catch (err) {
    if (err instanceof PlanError) return new StepFailed('decision', `invalid manifests: ${err.message}`);
    throw err;
  }
  const prune = a.request.prune || c.syncPolicy?.automated?.prune === true;
  const previouslyApplied = c.inputs.applied.get(c.server) ?? [];
  const stale = pruneCandidates(
    previouslyApplied.filter(
      (r) =>
        !isControlPlaneRef(r) &&
        !isExcludedRef(r, { filter: a.deps.settings.resourceFilter, server: c.server }) &&
        // A selective sync prunes only the resources it names (Argo CD's resources filter).
        c.selection.includesRef(r),
    ),
    plan,
  );
  const execution = await executionOptions(a, c, plan, prune && stale.length > 0);
  a.lap('discoveryMs');
  const access = await preflight(
    c.cluster,
    {
      plan,
      createNamespace: c.createNamespace
        ? { apiVersion: 'v1', kind: 'Namespace', name: c.createNamespace.metadata.name }
        : undefined,
      pruneCandidates: prune ? stale : [],
      verbsOf: (o) => verbsOf(execution.writeMode!(o)),
    },
    a.record,
  );
  if (!access.ok) return new StepFailed('apply', access.reason);
  a.lap('preflightMs');
  return { ...c, plan, prune, previouslyApplied, stale, execution };
}

/** Replace=true writes with PUT (update) or POST (create); Force=true deletes first. */
function verbsOf(mode: { replace?: boolean; force?: boolean }): WriteVerb[] {
  if (!mode.replace) return ['patch'];
  return mode.force ? ['create', 'update', 'delete'] : ['create', 'update'];
}

async function executionOptions(
  a: SyncAttempt,
  c: Connected,
  plan: SyncPlan,
  pruning: boolean,
): Promise<Planned['execution']> {
  const { options } = c;
  // Each object's own sync-options annotation (its warnings said once per object).
  const perObject = new Map(
    plan.resources
      .concat(plan.preSync.flat(), plan.postSync.flat(), plan.syncFail.flat())
      .map((o) => [o, parseResourceSyncOptions(o.object, describeRef(o.ref))] as const),
  );
  for (const [o, r] of perObject) for (const warning of r.warnings) a.record(optionWarning(o.ref, warning));
  const entries = [
    ...(a.deps.settings.systemIgnoreDifferences ?? []),
    ...((a.application?.spec.ignoreDifferences ?? []) as unknown as IgnoreDifference[]),
  ];
  if (options.respectIgnoreDifferences)
    for (const warning of unsupportedRespectEntries(entries))
      a.record(optionWarning({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', ...a.app }, warning));
  const beforeWrite =
    options.applyOutOfSyncOnly || options.respectIgnoreDifferences
      ? beforeWriteFor({ options, entries, ignore: await compileIgnoreDifferences(entries) })
      : undefined;
  // Prune=confirm is confirmed by a deletion-approved annotation newer than the last operation.
  const annotations = a.application?.metadata.annotations as Record<string, string> | undefined;
  const pruneConfirmed =
    pruning && deletionApproved(annotations, await previousOperationEnd(a.deps.db, a.op));
  return {
    writeMode: (o) => {
      const { replace, force, fieldValidation } = writeMode(
        options,
        perObject.get(o) ?? parseResourceSyncOptions(o.object),
      );
      return { replace, force, fieldValidation };
    },
    ...(beforeWrite ? { beforeWrite } : {}),
    pruneMode: (live) => pruneMode(options, parseResourceSyncOptions(live)),
    pruneConfirmed,
    propagationPolicy: propagationOf(options.prunePropagationPolicy),
  };
}

function optionWarning(ref: ObjectRef, message: string) {
  return {
    verb: 'check',
    group: ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '',
    kind: ref.kind,
    namespace: ref.namespace ?? null,
    name: ref.name,
    status: 'SyncOptionWarning',
    httpStatus: null,
    message,
  };
}
