// One attempt of one sync operation, start to terminal, in named steps: resolve the inputs and
// decide (the decision on record before touching the cluster), connect as the decided identity
// and discover, plan under the sync options with pre-flight access checks, execute, and record
// the outcome — exactly one terminal event, unless syncPolicy.retry schedules another attempt or a
// target cluster that cannot be reached puts the operation back in the queue with backoff.
import { contextOfTraceparent, inSpan, type Logger } from '@capstan/service';
import type { HealthAssessor } from '@capstan/health';
import type { SyncDb } from '../sync.table.js';
import type { DecisionSettings } from '../decision/decide.js';
import type { AuditWriter } from '../decision/audit-writer.js';
import type { ManifestSource } from '../manifests/manifest-source.js';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import { ImpersonationError } from '../kube/kube-config.js';
import type { TargetClusterPool } from '../kube/target-cluster-pool.js';
import type { DeliveredObjects } from '../delivery/api-delivery.js';
import type { ClaimedOperation } from './operations.repository.js';
import { StepFailed, SyncAttempt, type Outcome } from './sync-attempt.js';
import { resolveInputs } from './steps/resolve-inputs.js';
import { connect } from './steps/connect.js';
import { planOperation } from './steps/plan.js';
import { executeOperation } from './steps/execute.js';
import { recordSuccess } from './steps/record-outcome.js';
import type { AppScope, SyncMetrics } from '../observability/sync-metrics.js';

export interface SyncRunnerDeps {
  db: SyncDb;
  credentials: ClusterCredentialsSource;
  manifests: ManifestSource;
  settings: DecisionSettings & { hookTimeoutMs: number; waveTimeoutMs?: number; maxAttempts: number };
  /** Health of live objects: sync waves and hooks wait on it (apply/health-wait.ts). */
  health?: HealthAssessor;
  logger: Logger;
  clusters: TargetClusterPool;
  /** Group-committed audit appends. */
  audit: AuditWriter;
  /** Where control-plane objects (argoproj.io AppProject, Application) go: the api. */
  delivery: DeliveredObjects;
  /** capstan_app_sync_total and the requests of each attempt (none in tests that do not look). */
  metrics?: SyncMetrics;
}

/**
 * Runs one attempt in a span that continues the trace of whatever queued the operation, with the
 * request's correlation id; its requests to the cluster are child spans.
 */
export function runOperation(deps: SyncRunnerDeps, op: ClaimedOperation): Promise<Outcome> {
  return inSpan(
    `sync ${op.appNamespace}/${op.appName}`,
    {
      'capstan.correlation_id': op.correlationId ?? '',
      'capstan.operation_id': op.operationId,
      'capstan.attempt': op.attempt,
      'capstan.application': `${op.appNamespace}/${op.appName}`,
    },
    () => runMetered(deps, op),
    { parent: contextOfTraceparent(op.traceParent) },
  );
}

async function runMetered(deps: SyncRunnerDeps, op: ClaimedOperation): Promise<Outcome> {
  const a = new SyncAttempt(deps, op);
  if (!deps.metrics) return attempt(a);
  const scope: AppScope = {
    namespace: a.app.namespace,
    name: a.app.name,
    project: '',
    destServer: '',
    dryRun: a.request.dryRun === true,
  };
  return deps.metrics.sync(scope, () => attempt(a, scope));
}

/** The steps; `scope` (the attempt's metric labels) learns the project and destination on the way. */
async function attempt(a: SyncAttempt, scope?: AppScope): Promise<Outcome> {
  const learned = (server?: string) => {
    if (!scope) return;
    scope.project = a.application?.spec.project || scope.project;
    scope.destServer = server ?? (a.application?.spec.destination.server || scope.destServer);
  };
  const failed = (f: StepFailed) => a.fail(f.phase, f.reason, f.final);
  try {
    const resolved = await resolveInputs(a);
    learned();
    if (resolved instanceof StepFailed) return await failed(resolved);
    const connected = await connect(a, resolved);
    if (connected instanceof StepFailed) return await failed(connected);
    learned(connected.server);
    const planned = await planOperation(a, connected);
    if (planned instanceof StepFailed) return await failed(planned);
    const executed = await executeOperation(a, planned);
    if (executed instanceof StepFailed) return await failed(executed);
    return await recordSuccess(a, executed);
  } catch (err) {
    if (err instanceof ImpersonationError) return a.fail('decision', err.message);
    return a.handleError(err);
  }
}
