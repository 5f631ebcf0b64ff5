// The use cases of AppSetService, each for the user the api authenticated (its delegation names
// them; the CallerDelegations let this service call back the api and repo as that same user):
// Upsert (generate, all-or-nothing dry-run verdict, then store, record the owner and apply), Get,
// List, Delete (the caller must be allowed to delete every Application the set owns) and Generate
// (no writes). Nothing is stored when a check refuses.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppSetError, selectorMatches, type GeneratorSpec } from '@capstan/appset-engine';
import { AlreadyExistsError, NotFoundError, PermissionDeniedError, publicMessageOf } from '@capstan/service';
import type { AppSetDatabase } from '../sets/appset.table.js';
import { findAppSet, listAppSets, recordReconciledInputs } from '../sets/appset.repository.js';
import { reconciledInputs } from '../reconcile/inputs.js';
import { runAppSetCommand, type CommandMeta } from '../sets/appset-store.js';
import {
  issuesToValidation,
  sameAppSet,
  setKey,
  setStream,
  validateManifest,
  validateManifestJson,
  type StoredAppSet,
  type ValidatedAppSet,
} from '../sets/manifest.js';
import type { Verdict } from '../peers/api-peer.js';
import { SPEC_DIFFERS } from '../sets/appset.aggregate.js';
import { nextStatus, type Outcome } from '../sets/status.js';
import { deletePolicy } from '../sets/sync-policy.js';
import {
  applyRequest,
  declaredInputs,
  generate,
  refusalMessage,
  withVerdicts,
  type Acting,
  type Generated,
  type GenerationDeps,
} from './generation.js';
import { parseLabelSelector } from './label-selector.js';
import { renderAppSet } from './render.js';

export interface Caller extends CommandMeta {
  delegations: Acting;
}

export interface FlowDeps extends GenerationDeps {
  db: Kysely<AppSetDatabase>;
  requeueSeconds: number;
}

export type GeneratedApplication = ReturnType<typeof withVerdicts>[number];

export interface SetResult {
  applicationSet: Record<string, unknown>;
  applications: GeneratedApplication[];
}

const notFound = (name: string) =>
  new NotFoundError(`applicationsets.argoproj.io ${JSON.stringify(name)} not found`);

/** Generation failures of a request are bad input: field paths as the engine reports them. */
async function generateForRequest(deps: FlowDeps, v: ValidatedAppSet, acting: Acting): Promise<Generated> {
  try {
    return await generate(deps, v, acting);
  } catch (err) {
    if (err instanceof AppSetError) throw issuesToValidation(err.issues, err);
    throw err;
  }
}

/** The requeue interval of a set: the smallest requeueAfterSeconds of its git generators, else the default. */
export function requeueSecondsOf(v: ValidatedAppSet, fallback: number): number {
  const values: number[] = [];
  const visit = (g: GeneratorSpec) => {
    if (g.git?.requeueAfterSeconds) values.push(g.git.requeueAfterSeconds);
    g.matrix?.generators.forEach(visit);
    g.merge?.generators.forEach(visit);
  };
  v.parsed.spec.generators.forEach(visit);
  return values.length > 0 ? Math.min(...values) : fallback;
}

/** Apply for everything the set owns, as its deletion (the policy decides whether it is sent for real). */
function deleteAllRequest(ref: { namespace: string; name: string }, set: StoredAppSet) {
  return {
    applicationSet: setKey(ref),
    applicationsJson: [],
    allowUpdate: false,
    deleteMissing: false,
    deleteAll: true,
    preserveResources: deletePolicy(validateManifest(set).parsed).preserveResources,
  };
}

export class AppSetFlows {
  constructor(private readonly deps: FlowDeps) {}

  async upsert(
    req: { manifestJson: string; upsert: boolean; dryRun: boolean },
    caller: Caller,
  ): Promise<SetResult> {
    const v = validateManifestJson(req.manifestJson);
    const key = v.stored.metadata;
    const existing = await findAppSet(this.deps.db, key);
    if (existing && !req.upsert && !sameAppSet(existing.set, v.stored))
      throw new AlreadyExistsError(SPEC_DIFFERS);
    if (existing) {
      // Updating a set (and becoming its owner) needs rights over every Application it owns today,
      // whatever the new version generates (proposal 003; Argo CD's: create, update and delete them).
      const owned = await this.checkOwned(key, existing.set, caller);
      if (owned.some((x) => !x.allowed))
        return { applicationSet: renderAppSet(v.stored, existing), applications: owned };
    }
    const g = await generateForRequest(this.deps, v, caller.delegations);
    const check = await this.deps.api.apply(caller.delegations.api, applyRequest(v, g, true));
    const verdicts = withVerdicts(g.result.applications, check.verdicts);
    if (req.dryRun || verdicts.some((x) => !x.allowed))
      return { applicationSet: renderAppSet(v.stored, existing), applications: verdicts };

    const inputs = {
      ...declaredInputs(v),
      gitRepos: g.gitRepos,
      requeueSeconds: requeueSecondsOf(v, this.deps.requeueSeconds),
    };
    const written = await runAppSetCommand(
      this.deps.db,
      key,
      { type: 'upsert', applicationSet: v.stored, upsert: req.upsert, uid: existing?.uid ?? randomUUID() },
      caller,
      inputs,
    );
    const owner = await this.deps.api.recordOwner(caller.delegations.api, setStream(key));
    // Forgotten before anything is applied; recorded again once this generation is (reconcile/inputs.ts).
    await recordReconciledInputs(this.deps.db, key, null);
    let outcome: Outcome;
    let failure: unknown;
    let applied = verdicts;
    try {
      const res = await this.deps.api.apply(caller.delegations.api, applyRequest(v, g, false));
      applied = withVerdicts(g.result.applications, res.verdicts);
      outcome =
        res.applied && applied.every((x) => x.allowed)
          ? { kind: 'applied', applications: g.result.applications, digest: g.digest }
          : {
              kind: 'apply-failed',
              reason: existing ? 'UpdateApplicationError' : 'CreateApplicationError',
              message: refusalMessage(res.verdicts) || 'the api did not apply the Applications',
            };
    } catch (err) {
      failure = err;
      outcome = {
        kind: 'apply-failed',
        reason: existing ? 'UpdateApplicationError' : 'CreateApplicationError',
        message: publicMessageOf(err),
      };
    }
    const status = nextStatus(written.state.status, outcome, new Date());
    const final = await runAppSetCommand(this.deps.db, key, { type: 'record-status', status }, caller);
    if (outcome.kind === 'applied')
      await recordReconciledInputs(
        this.deps.db,
        key,
        reconciledInputs({
          manifest: v.stored,
          engine: this.deps.engine.identity,
          limits: this.deps.limits,
          owner,
          observed: g.observed,
        }),
      );
    if (failure) throw failure;
    const row = await findAppSet(this.deps.db, key);
    return { applicationSet: renderAppSet(final.state.set ?? v.stored, row), applications: applied };
  }

  async get(ref: { namespace: string; name: string }): Promise<SetResult> {
    const row = await findAppSet(this.deps.db, ref);
    if (!row) throw notFound(ref.name);
    return { applicationSet: renderAppSet(row.set, row), applications: [] };
  }

  async list(req: { namespace: string; selector: string }): Promise<Record<string, unknown>[]> {
    const selector = req.selector ? parseLabelSelector(req.selector) : undefined;
    const rows = await listAppSets(this.deps.db, req.namespace || undefined);
    return rows
      .filter((r) => !selector || selectorMatches(selector, r.set.metadata.labels ?? {}))
      .map((r) => renderAppSet(r.set, r));
  }

  /** The api's verdict on deleting every Application the set owns today (a dry run: nothing is written). */
  private async checkOwned(
    ref: { namespace: string; name: string },
    set: StoredAppSet,
    caller: Caller,
  ): Promise<GeneratedApplication[]> {
    const check = await this.deps.api.apply(caller.delegations.api, {
      ...deleteAllRequest(ref, set),
      dryRun: true,
    });
    return withVerdicts([], check.verdicts);
  }

  async delete(ref: { namespace: string; name: string }, caller: Caller): Promise<GeneratedApplication[]> {
    const row = await findAppSet(this.deps.db, ref);
    if (!row) throw notFound(ref.name);
    const policy = deletePolicy(validateManifest(row.set).parsed);
    // The caller must be allowed to delete every Application the set owns, whatever the policy does with them.
    const owned = await this.checkOwned(ref, row.set, caller);
    if (owned.some((x) => !x.allowed)) throw new PermissionDeniedError(refusalMessage(owned));
    let verdicts: readonly Verdict[] = owned;
    if (policy.deleteApplications) {
      const res = await this.deps.api.apply(caller.delegations.api, {
        ...deleteAllRequest(ref, row.set),
        dryRun: false,
      });
      if (!res.applied || res.verdicts.some((x) => !x.allowed))
        throw new PermissionDeniedError(
          refusalMessage(res.verdicts) || 'the api did not delete the Applications',
        );
      verdicts = res.verdicts;
    }
    await runAppSetCommand(
      this.deps.db,
      ref,
      {
        type: 'delete',
        name: ref.name,
        namespace: ref.namespace,
        preserveResources: policy.preserveResources,
      },
      caller,
    );
    return withVerdicts([], verdicts);
  }

  async generate(req: { manifestJson: string }, caller: Caller): Promise<SetResult> {
    const v = validateManifestJson(req.manifestJson);
    const g = await generateForRequest(this.deps, v, caller.delegations);
    const check = await this.deps.api.apply(caller.delegations.api, applyRequest(v, g, true));
    return {
      applicationSet: renderAppSet(v.stored),
      applications: withVerdicts(g.result.applications, check.verdicts),
    };
  }
}
