// The credential use cases. Every lookup and every mutation (and every refusal) writes exactly one
// audit.credential_decisions row: the candidates by id and scope, the one chosen and why, for whom.
// Successful mutations write their row in the same transaction as the change; refusals write
// theirs on their own, because the refused transaction is rolled back. Lookups are in
// credential-lookup.ts, the sealed rows in credential-writes.ts, the audit rows in credential-decision.ts.
import type { Kysely } from '@capstan/db';
import type { Keyring } from '@capstan/sealing';
import { AlreadyExistsError, ConcurrencyError, NotFoundError } from '@capstan/service';
import type { CredentialInput, CredentialMetadata } from './credential.js';
import { validateCredentialInput } from './credential-input.js';
import {
  allowed,
  decisionBase,
  recordDecision,
  recordRefusal,
  scopeText,
  type Decision,
} from './credential-decision.js';
import {
  credentialById,
  credentialByName,
  credentialsForUrl,
  deleteCredential,
  listCredentialRows,
  toMetadata,
} from './credential.repository.js';
import type { RepoDatabase } from './credential.table.js';
import { parseRepositorySecret } from './declarative-secret.js';
import { normalizeRepoUrl, redactRepoUrl } from './repo-url.js';
import { insertSealed, replaceSealed } from './credential-writes.js';
import { lookupForApplication, resolveOrRefuse, type LookupResult } from './credential-lookup.js';
import { findForMutation } from './selection.js';

export type { LookupResult } from './credential-lookup.js';

export interface Caller {
  /** The authenticated principal the api forwarded (or the service itself for internal lookups). */
  actor: string;
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
          ? await replaceSealed(trx, this.keyring, existing, input)
          : await insertSealed(trx, this.keyring, input, {
              actor: caller.actor,
              origin: opts.origin ?? 'api',
            });
        await recordDecision(trx, {
          ...allowed(base, rows, row.id),
          operation: existing ? 'update' : 'create',
        });
        return toMetadata(row);
      });
    } catch (err) {
      throw await recordRefusal(this.db, base, err);
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
        const row = await replaceSealed(trx, this.keyring, existing, input);
        await recordDecision(trx, allowed(base, rows, row.id));
        return toMetadata(row);
      });
    } catch (err) {
      throw await recordRefusal(this.db, base, err);
    }
  }

  /** API get: one match and no project returns it; a project must match; several need a project. */
  async get(url: string, project: string, caller: Caller): Promise<CredentialMetadata> {
    const base = decisionBase('get', url, project, caller);
    const rows = await credentialsForUrl(this.db, normalizeRepoUrl(url));
    const found = await resolveOrRefuse(this.db, rows, { url, project }, base);
    await recordDecision(this.db, allowed(base, rows, found.id));
    return toMetadata(found);
  }

  /** API delete, with get's selection rules. */
  async delete(url: string, project: string, caller: Caller): Promise<CredentialMetadata> {
    const base = decisionBase('delete', url, project, caller);
    return this.db.transaction().execute(async (trx) => {
      const rows = await credentialsForUrl(trx, normalizeRepoUrl(url));
      const found = await resolveOrRefuse(this.db, rows, { url, project }, base);
      await deleteCredential(trx, found.id);
      await recordDecision(trx, allowed(base, rows, found.id));
      return toMetadata(found);
    });
  }

  /** Lists credentials (all, or one project's scope; '' lists the unscoped ones). */
  async list(project: string | undefined, caller: Caller): Promise<CredentialMetadata[]> {
    const rows = await listCredentialRows(this.db, project === undefined ? {} : { project });
    await recordDecision(this.db, allowed(decisionBase('list', '*', project ?? '', caller), rows, null));
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
      throw await recordRefusal(this.db, decisionBase('create', url, '', caller), err);
    }
    const base = decisionBase('create', parsed.input.url, parsed.input.project, caller);
    const input = await this.validated(parsed.input, base);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const byName = await credentialByName(trx, parsed.name, { forUpdate: true });
        const rows = await credentialsForUrl(trx, normalizeRepoUrl(input.url));
        const considered = byName && !rows.some((r) => r.id === byName.id) ? [...rows, byName] : rows;
        const operation = byName ? 'update' : 'create';
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
          await recordDecision(trx, {
            ...allowed(base, considered, byName?.id ?? null),
            operation,
            message: 'dry run: nothing written',
          });
          return { credential: byName ? toMetadata(byName) : null, outcome };
        }
        const row = byName
          ? await replaceSealed(trx, this.keyring, byName, input)
          : await insertSealed(trx, this.keyring, input, { actor: caller.actor, origin: 'declarative' });
        await recordDecision(trx, { ...allowed(base, considered, row.id), operation });
        return { credential: toMetadata(row), outcome };
      });
    } catch (err) {
      throw await recordRefusal(this.db, base, err);
    }
  }

  /**
   * The credential a checkout for an Application of `project` uses: first scoped to the project,
   * else first unscoped, else anonymous. The secret is decrypted only here, for the checkout.
   */
  lookupForApplication(
    req: { url: string; project: string; application: string | null },
    caller: Caller,
  ): Promise<LookupResult> {
    return lookupForApplication(this.db, this.keyring, req, caller);
  }

  /** The name of a credential by id (for responses that say which one was chosen). */
  async nameOf(id: string): Promise<string | undefined> {
    return (await credentialById(this.db, id))?.name;
  }

  private async validated(raw: CredentialInput, base: Decision): Promise<CredentialInput> {
    try {
      return validateCredentialInput(raw);
    } catch (err) {
      throw await recordRefusal(this.db, base, err);
    }
  }
}
