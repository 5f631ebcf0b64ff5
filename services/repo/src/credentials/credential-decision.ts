// The audit row of a credential decision, before the outcome is known: who asked, for which URL
// and project, which candidates were considered (ids and scopes, never secrets).
import { CapstanError } from '@capstan/service';
import type { AuditRow, CredentialCandidate } from '@capstan/db';
import type { CredentialRow } from './credential.table.js';
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
