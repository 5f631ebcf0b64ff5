// The credential use cases. Every lookup and every mutation (and every refusal) writes exactly one
// audit.credential_decisions row: the candidates by id and scope, the one chosen and why, for whom.
// Successful mutations write their row in the same transaction as the change; refusals write
// theirs on their own, because the refused transaction is rolled back.
import { randomUUID } from 'node:crypto';
import { appendAudit, type Kysely } from '@capstan/db';
import type { Keyring } from '@capstan/sealing';
import {
  AlreadyExistsError,
  CapstanError,
  ConcurrencyError,
  FailedPreconditionError,
  NotFoundError,
} from '@capstan/service';
import type { CheckoutCredential } from '../checkouts/checkout-store.js';
import type { CredentialInput, CredentialMetadata } from './credential.js';
import { validateCredentialInput } from './credential-input.js';
import { candidatesOf, decisionBase, messageOf, scopeText, type Decision } from './credential-decision.js';
import {
  credentialById,
  credentialByName,
  credentialsForUrl,
  deleteCredential,
  insertCredential,
  listCredentialRows,
  toMetadata,
  updateCredential,
  type RepoDb,
} from './credential.repository.js';
import type { CredentialRow, RepoDatabase } from './credential.table.js';
import { parseRepositorySecret } from './declarative-secret.js';
import { normalizeRepoUrl, redactRepoUrl } from './repo-url.js';
import { openCredentialSecret, sealCredentialSecret } from './credential-seal.js';
import { credentialSecretName } from './secret-name.js';
import { findForMutation, resolveForApi, selectForProject, type LookupReason } from './selection.js';

export interface Caller {
  /** The authenticated principal the api forwarded (or the service itself for internal lookups). */
  actor: string;
}

export interface LookupResult {
  credential: CheckoutCredential | null;
  credentialId: string | null;
  reason: LookupReason;
  /**
   * Settles when the decision's audit row is written. Callers may start the checkout meanwhile,
   * but must await it before answering, so no answer goes out without its audit row.
   */
  recorded: Promise<void>;
}

/** What applying a declarative Secret did (or, in a dry run, would do). */
export interface SecretApplyResult {
  /** The credential written; in a dry run the one the name already holds, or null. */
  credential: CredentialMetadata | null;
  outcome: 'created' | 'configured';
}

export class CredentialService {
  constructor(
    private readonly db: Kysely<RepoDatabase>,
    private readonly keyring: Keyring,
  ) {}

  /** Creates a credential; with `upsert`, replaces the one in the same URL and scope. */
  async create(
    raw: CredentialInput,
    caller: Caller,
    opts: { upsert?: boolean; origin?: 'api' | 'declarative' } = {},
  ): Promise<CredentialMetadata> {
    const base = decisionBase('create', raw.url, raw.project, caller);
    const input = await this.validated(raw, base);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const rows = await credentialsForUrl(trx, normalizeRepoUrl(input.url));
        const existing = findForMutation(rows, input.url, input.project);
        if (existing && !opts.upsert) {
          throw new AlreadyExistsError(
            `a credential for ${redactRepoUrl(input.url)} ${scopeText(input.project)} already exists`,
          );
        }
        const row = existing
          ? await this.replace(trx, existing, input)
          : await this.insert(trx, input, caller, opts.origin ?? 'api');
        await this.audit(trx, {
          ...base,
          operation: existing ? 'update' : 'create',
          candidates: candidatesOf(rows),
          chosen_id: row.id,
          reason: 'exact',
          outcome: 'allow',
        });
        return toMetadata(row);
      });
    } catch (err) {
      throw await this.refused(base, err);
    }
  }

  /** Replaces the credential with exactly this URL and scope (strict: never another project's). */
  async update(raw: CredentialInput, caller: Caller): Promise<CredentialMetadata> {
    const base = decisionBase('update', raw.url, raw.project, caller);
    const input = await this.validated(raw, base);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const rows = await credentialsForUrl(trx, normalizeRepoUrl(input.url));
        const existing = findForMutation(rows, input.url, input.project);
        if (!existing)
          throw new NotFoundError(
            `no credential for ${redactRepoUrl(input.url)} ${scopeText(input.project)}`,
          );
        const row = await this.replace(trx, existing, input);
        await this.audit(trx, {
          ...base,
          candidates: candidatesOf(rows),
          chosen_id: row.id,
          reason: 'exact',
          outcome: 'allow',
        });
        return toMetadata(row);
      });
    } catch (err) {
      throw await this.refused(base, err);
    }
  }

  /** API get: one match and no project returns it; a project must match; several need a project. */
  async get(url: string, project: string, caller: Caller): Promise<CredentialMetadata> {
    const base = decisionBase('get', url, project, caller);
    const rows = await credentialsForUrl(this.db, normalizeRepoUrl(url));
    const found = await this.resolveOrRefuse(rows, url, project, base);
    await this.audit(this.db, {
      ...base,
      candidates: candidatesOf(rows),
      chosen_id: found.id,
      reason: 'exact',
      outcome: 'allow',
    });
    return toMetadata(found);
  }

  /** API delete, with get's selection rules. */
  async delete(url: string, project: string, caller: Caller): Promise<CredentialMetadata> {
    const base = decisionBase('delete', url, project, caller);
    return this.db.transaction().execute(async (trx) => {
      const rows = await credentialsForUrl(trx, normalizeRepoUrl(url));
      const found = await this.resolveOrRefuse(rows, url, project, base);
      await deleteCredential(trx, found.id);
      await this.audit(trx, {
        ...base,
        candidates: candidatesOf(rows),
        chosen_id: found.id,
        reason: 'exact',
        outcome: 'allow',
      });
      return toMetadata(found);
    });
  }

  /** Lists credentials (all, or one project's scope; '' lists the unscoped ones). */
  async list(project: string | undefined, caller: Caller): Promise<CredentialMetadata[]> {
    const rows = await listCredentialRows(this.db, project === undefined ? {} : { project });
    await this.audit(this.db, {
      ...decisionBase('list', '*', project ?? '', caller),
      candidates: candidatesOf(rows),
      chosen_id: null,
      reason: 'exact',
      outcome: 'allow',
    });
    return rows.map(toMetadata);
  }

  /**
   * Applies an Argo CD declarative repository Secret: created, or updated in place by name. The
   * name never moves a credential between scopes: a name held by a credential of another project
   * (or unscoped, or scoped when the Secret is not) is a conflict whose message names neither that
   * project nor anything of the credential. With `dryRun` nothing is written and the existing
   * credential of that name (same scope) is returned for the caller's authorisation; `expectedId`
   * ('' = none) refuses when the name's holder changed since that plan.
   */
  async applySecret(
    manifest: unknown,
    caller: Caller,
    opts: { dryRun?: boolean; expectedId?: string } = {},
  ): Promise<SecretApplyResult> {
    let parsed;
    try {
      parsed = parseRepositorySecret(manifest);
    } catch (err) {
      const url =
        typeof (manifest as { stringData?: { url?: unknown } })?.stringData?.url === 'string'
          ? String((manifest as { stringData: { url: string } }).stringData.url)
          : '';
      throw await this.refused(decisionBase('create', url, '', caller), err);
    }
    const base = decisionBase('create', parsed.input.url, parsed.input.project, caller);
    const input = await this.validated(parsed.input, base);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const byName = await credentialByName(trx, parsed.name, { forUpdate: true });
        const rows = await credentialsForUrl(trx, normalizeRepoUrl(input.url));
        const candidates = candidatesOf(
          byName && !rows.some((r) => r.id === byName.id) ? [...rows, byName] : rows,
        );
        if (byName && byName.project !== input.project) {
          throw new AlreadyExistsError(
            `a repository credential named ${JSON.stringify(parsed.name)} already exists in another scope; choose another metadata.name`,
          );
        }
        if (opts.expectedId !== undefined && opts.expectedId !== (byName?.id ?? '')) {
          throw new ConcurrencyError(
            `the repository credential named ${JSON.stringify(parsed.name)} changed while it was applied; apply again`,
          );
        }
        const outcome = byName ? 'configured' : 'created';
        if (opts.dryRun) {
          await this.audit(trx, {
            ...base,
            operation: byName ? 'update' : 'create',
            candidates,
            chosen_id: byName?.id ?? null,
            reason: 'exact',
            outcome: 'allow',
            message: 'dry run: nothing written',
          });
          return { credential: byName ? toMetadata(byName) : null, outcome };
        }
        const row = byName
          ? await this.replace(trx, byName, input)
          : await this.insert(trx, input, caller, 'declarative');
        await this.audit(trx, {
          ...base,
          operation: byName ? 'update' : 'create',
          candidates,
          chosen_id: row.id,
          reason: 'exact',
          outcome: 'allow',
        });
        return { credential: toMetadata(row), outcome };
      });
    } catch (err) {
      throw await this.refused(base, err);
    }
  }

  /**
   * The credential a checkout for an Application of `project` uses: first scoped to the project,
   * else first unscoped, else anonymous. The secret is decrypted only here, for the checkout.
   */
  async lookupForApplication(
    req: { url: string; project: string; application: string | null },
    caller: Caller,
  ): Promise<LookupResult> {
    const base: Decision = {
      ...decisionBase('lookup', req.url, req.project, caller),
      application: req.application,
    };
    const rows = await credentialsForUrl(this.db, normalizeRepoUrl(req.url));
    const decision = selectForProject(rows, req.url, req.project);
    const row = decision.chosen;
    let credential: CheckoutCredential | null = null;
    try {
      if (row) {
        const secret = openCredentialSecret(this.keyring, row);
        credential = {
          id: row.id,
          version: String(row.updated_at.getTime()),
          auth: {
            username: row.username,
            ...secret,
            insecure: row.insecure,
            ...(row.insecure_oci_force_http ? { ociPlainHttp: true } : {}),
          },
        };
      }
    } catch (err) {
      await this.audit(this.db, {
        ...base,
        candidates: candidatesOf(decision.considered),
        chosen_id: row?.id ?? null,
        reason: decision.reason,
        outcome: 'error',
        message: messageOf(err),
      });
      throw err;
    }
    const recorded = this.audit(this.db, {
      ...base,
      candidates: candidatesOf(decision.considered),
      chosen_id: row?.id ?? null,
      reason: decision.reason,
      outcome: 'allow',
    });
    // Observed here so a caller that fails first leaves no unhandled rejection behind.
    recorded.catch(() => undefined);
    return { credential, credentialId: row?.id ?? null, reason: decision.reason, recorded };
  }

  /** The name of a credential by id (for responses that say which one was chosen). */
  async nameOf(id: string): Promise<string | undefined> {
    return (await credentialById(this.db, id))?.name;
  }

  private async resolveOrRefuse(
    rows: CredentialRow[],
    url: string,
    project: string,
    base: Decision,
  ): Promise<CredentialRow> {
    const resolution = resolveForApi(rows, url, project);
    if (resolution.outcome === 'found') return resolution.credential;
    const candidates = candidatesOf(resolution.considered);
    if (resolution.outcome === 'ambiguous') {
      // The projects stay in the audit row: the caller may not see them all (the api names the ones it may).
      const err = new FailedPreconditionError(
        `several credentials exist for ${redactRepoUrl(url)}; name the project`,
      );
      await this.audit(this.db, {
        ...base,
        candidates,
        reason: 'ambiguous',
        outcome: 'deny',
        message: err.message,
      });
      throw err;
    }
    const err = new NotFoundError(
      `no credential for ${redactRepoUrl(url)}${project ? ` in project ${project}` : ''}`,
    );
    await this.audit(this.db, {
      ...base,
      candidates,
      reason: 'not-found',
      outcome: 'deny',
      message: err.message,
    });
    throw err;
  }

  private async validated(raw: CredentialInput, base: Decision): Promise<CredentialInput> {
    try {
      return validateCredentialInput(raw);
    } catch (err) {
      throw await this.refused(base, err);
    }
  }

  /** Records a refused mutation and returns the error to throw (unique races become AlreadyExists). */
  private async refused(base: Decision, err: unknown): Promise<unknown> {
    let error = err;
    if ((err as { code?: string }).code === '23505') {
      error = new AlreadyExistsError(
        `a credential with this name, or for ${base.repo_url} ${scopeText(base.project ?? '')}, already exists`,
        { cause: err },
      );
    }
    if (error instanceof CapstanError) {
      await this.audit(this.db, {
        ...base,
        reason: error instanceof NotFoundError ? 'not-found' : 'refused',
        outcome: 'deny',
        message: error.message,
      });
    } else {
      await this.audit(this.db, { ...base, reason: 'refused', outcome: 'error', message: 'internal error' });
    }
    return error;
  }

  private async insert(
    trx: RepoDb,
    input: CredentialInput,
    caller: Caller,
    origin: 'api' | 'declarative',
  ): Promise<CredentialRow> {
    const id = randomUUID();
    return insertCredential(trx, {
      id,
      name: input.name ?? credentialSecretName(input.url, input.project),
      ...this.storedColumns(id, input),
      origin,
      created_by: caller.actor,
    });
  }

  private async replace(
    trx: RepoDb,
    existing: CredentialRow,
    input: CredentialInput,
  ): Promise<CredentialRow> {
    return updateCredential(trx, existing.id, this.storedColumns(existing.id, input));
  }

  /** The columns a create and a replace both write: the metadata and the secret sealed for `id`. */
  private storedColumns(id: string, input: CredentialInput) {
    const sealed = sealCredentialSecret(this.keyring, id, input.secret);
    return {
      url: input.url,
      normalized_url: normalizeRepoUrl(input.url),
      project: input.project,
      type: input.type,
      display_name: input.displayName,
      username: input.username,
      insecure: input.insecure,
      enable_oci: Boolean(input.enableOci),
      insecure_oci_force_http: Boolean(input.insecureOciForceHttp),
      has_password: Boolean(input.secret.password),
      has_ssh_private_key: Boolean(input.secret.sshPrivateKey),
      key_id: sealed.keyId,
      nonce: sealed.nonce,
      ciphertext: sealed.ciphertext,
    };
  }

  private async audit(db: RepoDb | Kysely<RepoDatabase>, row: Decision): Promise<void> {
    await appendAudit(db as unknown as Kysely<unknown>, 'credential_decisions', row);
  }
}
