// Background reconciles. A set is regenerated when it is due: after its requeue interval, or at
// once when a trigger marks it (a push or new revision of a repository its git generators read, a
// cluster registry change). It acts as the set's recorded owner with the owner's rights of today:
// the api issues owner delegations (audiences api and repo) and re-checks every write. A
// regeneration equal to the last applied one writes nothing; a refusal leaves the Applications as
// they are and says why in the set's status. One set's failure never stops another's. A set whose
// inputs did not change since its last successful reconcile is not regenerated at all (inputs.ts):
// the owner's delegations and the pre-generate check are still made, and the revisions and the
// cluster registry it read are observed again, so what no event announced is still seen.
import type { Kysely } from 'kysely';
import { AppSetError } from '@capstan/appset-engine';
import { CapstanError, publicMessageOf, type Logger } from '@capstan/service';
import { delegatedActor } from '@capstan/service-identity';
import type { AppSetDatabase } from '../sets/appset.table.js';
import {
  claimDueSets,
  findAppSet,
  findReconciledInputs,
  recordInputs,
  recordReconciledInputs,
} from '../sets/appset.repository.js';
import { runAppSetCommand } from '../sets/appset-store.js';
import { setStream, validateManifest } from '../sets/manifest.js';
import {
  isUpToDate,
  nextStatus,
  reasonOfEngineError,
  type AppSetStatus,
  type Outcome,
} from '../sets/status.js';
import {
  applyRequest,
  generate,
  refusalMessage,
  type Acting,
  type GenerationDeps,
} from '../flows/generation.js';
import { inputsUnchanged, reconciledInputs, type ReconciledInputs } from './inputs.js';
import type { AppSetMetrics } from '../observability/appset-metrics.js';

export interface ReconcilerDeps extends GenerationDeps {
  db: Kysely<AppSetDatabase>;
  logger: Logger;
  /** capstan_appset_reconcile. */
  metrics?: AppSetMetrics;
}

export type ReconcileResult = 'applied' | 'unchanged' | 'failed' | 'gone';

/** One reconcile of one set: what it learns on the way (the owner, the inputs of its generation). */
interface Run {
  key: { namespace: string; name: string };
  resource: string;
  owner?: string;
  inputs?: ReconciledInputs;
}

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly opts: { tickMs: number; parallelism: number },
  ) {}

  /** Reconciles one set now, as its owner. */
  async reconcile(key: { namespace: string; name: string }): Promise<ReconcileResult> {
    const metrics = this.deps.metrics;
    return metrics ? metrics.reconcile(key, () => this.reconcileOnce(key)) : this.reconcileOnce(key);
  }

  private async reconcileOnce(key: { namespace: string; name: string }): Promise<ReconcileResult> {
    const row = await findAppSet(this.deps.db, key);
    if (!row) return 'gone';
    const v = validateManifest(row.set);
    const resource = setStream(key);
    const run: Run = { key, resource };
    const outcome = await this.attempt(v, row.status, run);
    if (outcome === 'unchanged') return 'unchanged';
    const status = nextStatus(row.status, outcome, new Date());
    await runAppSetCommand(
      this.deps.db,
      key,
      { type: 'record-status', status },
      {
        // The owner the api named when it issued the delegations (unknown when it refused to).
        actor: run.owner
          ? delegatedActor({ user: run.owner, holder: 'appset', kind: 'owner', resource })
          : `service:appset as owner of ${resource}`,
      },
    );
    if (outcome.kind === 'applied' && run.inputs) await recordReconciledInputs(this.deps.db, key, run.inputs);
    return outcome.kind === 'applied' ? 'applied' : 'failed';
  }

  /** The owner's delegations for api and repo (refused: the failure to report). */
  private async actAsOwner(run: Run): Promise<Acting | Outcome> {
    try {
      const [api, repo] = await Promise.all([
        this.deps.api.issueOwnerDelegation(run.resource, 'api'),
        this.deps.api.issueOwnerDelegation(run.resource, 'repo'),
      ]);
      run.owner = api.owner;
      return { api: api.delegation, repo: repo.delegation };
    } catch (err) {
      return {
        kind: 'apply-failed',
        reason: 'ErrorOccurred',
        message: `acting as the set's owner: ${publicMessageOf(err)}`,
      };
    }
  }

  private async attempt(
    v: ReturnType<typeof validateManifest>,
    previous: AppSetStatus,
    run: Run,
  ): Promise<Outcome | 'unchanged'> {
    const acting = await this.actAsOwner(run);
    if ('kind' in acting) return acting;
    // Inputs unchanged since the last successful reconcile: the generation would be the same.
    const recorded = isUpToDate(previous) ? await findReconciledInputs(this.deps.db, run.key) : undefined;
    if (recorded && (await inputsUnchanged(this.deps, v, acting, run.owner!, recorded))) {
      this.deps.logger.debug({ set: run.resource }, 'inputs unchanged: not regenerated');
      return 'unchanged';
    }
    let g;
    try {
      g = await generate(this.deps, v, acting);
    } catch (err) {
      await recordReconciledInputs(this.deps.db, run.key, null);
      if (err instanceof AppSetError)
        return { kind: 'generation-failed', reason: reasonOfEngineError(err.reason), message: err.message };
      if (err instanceof CapstanError)
        return {
          kind: 'generation-failed',
          reason: 'ApplicationGenerationFromParamsError',
          message: err.message,
        };
      throw err;
    }
    await recordInputs(this.deps.db, v.stored.metadata, {
      gitRepos: g.gitRepos,
      readsClusters: g.result.reads.clusters,
    });
    run.inputs = reconciledInputs({
      manifest: v.stored,
      engine: this.deps.engine.identity,
      limits: this.deps.limits,
      owner: run.owner!,
      observed: g.observed,
    });
    if (g.digest === previous.appliedDigest && isUpToDate(previous)) {
      await recordReconciledInputs(this.deps.db, run.key, run.inputs);
      return 'unchanged';
    }
    // Forgotten before anything is applied: inputs recorded for what is no longer applied never match.
    await recordReconciledInputs(this.deps.db, run.key, null);
    try {
      const res = await this.deps.api.apply(acting.api, applyRequest(v, g, false));
      if (res.applied && res.verdicts.every((x) => x.allowed))
        return { kind: 'applied', applications: g.result.applications, digest: g.digest };
      return {
        kind: 'apply-failed',
        reason: 'UpdateApplicationError',
        message: refusalMessage(res.verdicts) || 'the api did not apply the Applications',
      };
    } catch (err) {
      return { kind: 'apply-failed', reason: 'UpdateApplicationError', message: publicMessageOf(err) };
    }
  }

  /** Starts the loop: every tick, and at once when kicked, the due sets are reconciled. */
  start(): void {
    const tick = () => {
      this.kick();
      this.timer = setTimeout(tick, this.opts.tickMs);
      this.timer.unref();
    };
    tick();
  }

  /** Runs a round now (or right after the current one). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'reconcile round failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async round(): Promise<void> {
    for (;;) {
      const due = await claimDueSets(this.deps.db, this.opts.parallelism);
      if (due.length === 0 || this.stopped) return;
      await Promise.all(
        due.map((key) =>
          this.reconcile(key).then(
            (result) => this.deps.logger.debug({ set: `${key.namespace}/${key.name}`, result }, 'reconciled'),
            (err: unknown) =>
              this.deps.logger.warn({ err, set: `${key.namespace}/${key.name}` }, 'reconcile failed'),
          ),
        ),
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
