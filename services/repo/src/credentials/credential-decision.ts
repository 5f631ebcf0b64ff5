// The audit row of a credential decision, before the outcome is known: who asked, for which URL
// and project, which candidates were considered (ids and scopes, never secrets).
import { AlreadyExistsError, CapstanError, NotFoundError } from '@capstan/service';
import { appendAudit, type AuditRow, type CredentialCandidate, type Kysely } from '@capstan/db';
import type { CredentialRow, RepoDatabase } from './credential.table.js';
import type { RepoDb } from './credential.repository.js';
import { redactRepoUrl } from './repo-url.js';

export type Decision = AuditRow<'credential_decisions'>;

export const candidatesOf = (rows: readonly CredentialRow[]): CredentialCandidate[] =>
  rows.map((r) => ({ id: r.id, project: r.project === '' ? null : r.project, url: r.url }));

export function decisionBase(
  operation: Decision['operation'],
  url: string,
  project: string,
  caller: { actor: string },
): Decision {
  return {
    operation,
    repo_url: url === '*' ? '*' : redactRepoUrl(url),
    project: project === '' ? null : project,
    application: null,
    actor: caller.actor,
    candidates: [],
    chosen_id: null,
    reason: 'none',
    outcome: 'allow',
    message: null,
  };
}

export function scopeText(project: string): string {
  return project === '' ? 'without project scope' : `in project ${project}`;
}

/** A message safe for an audit row: only Capstan errors, whose messages never hold secrets. */
export function messageOf(err: unknown): string {
  return err instanceof CapstanError ? err.message : 'internal error';
}

/** An allowed decision with an exact match: `considered` by id and scope, `chosenId` the one used. */
export function allowed(
  base: Decision,
  considered: readonly CredentialRow[],
  chosenId: string | null,
): Decision {
  return {
    ...base,
    candidates: candidatesOf(considered),
    chosen_id: chosenId,
    reason: 'exact',
    outcome: 'allow',
  };
}

/** Writes the decision's audit row (in `db`'s transaction when it is one). */
export async function recordDecision(db: RepoDb, row: Decision): Promise<void> {
  await appendAudit(db as unknown as Kysely<unknown>, 'credential_decisions', row);
}

/** Records a refused mutation and returns the error to throw (unique races become AlreadyExists). */
export async function recordRefusal(
  db: Kysely<RepoDatabase>,
  base: Decision,
  err: unknown,
): Promise<unknown> {
  let error = err;
  if ((err as { code?: string }).code === '23505') {
    error = new AlreadyExistsError(
      `a credential with this name, or for ${base.repo_url} ${scopeText(base.project ?? '')}, already exists`,
      { cause: err },
    );
  }
  if (error instanceof CapstanError) {
    await recordDecision(db, {
      ...base,
      reason: error instanceof NotFoundError ? 'not-found' : 'refused',
      outcome: 'deny',
      message: error.message,
    });
  } else {
    await recordDecision(db, { ...base, reason: 'refused', outcome: 'error', message: 'internal error' });
  }
  return error;
}
