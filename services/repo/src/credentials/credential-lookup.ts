// Which credential a request gets, with its audit row: a checkout's lookup for an Application
// (project-scoped first, then unscoped, else anonymous; the secret opened only here), and the api's
// get and delete (one match, or the named project's).
import type { Kysely } from '@capstan/db';
import type { Keyring } from '@capstan/sealing';
import { FailedPreconditionError, NotFoundError } from '@capstan/service';
import type { CheckoutCredential } from '../checkouts/checkout-store.js';
import {
  candidatesOf,
  decisionBase,
  messageOf,
  recordDecision,
  type Decision,
} from './credential-decision.js';
import { credentialsForUrl } from './credential.repository.js';
import type { CredentialRow, RepoDatabase } from './credential.table.js';
import { normalizeRepoUrl, redactRepoUrl } from './repo-url.js';
import { openCredentialSecret } from './credential-seal.js';
import { resolveForApi, selectForProject, type LookupReason } from './selection.js';

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

export async function lookupForApplication(
  db: Kysely<RepoDatabase>,
  keyring: Keyring,
  req: { url: string; project: string; application: string | null },
  caller: { actor: string },
): Promise<LookupResult> {
  const base: Decision = {
    ...decisionBase('lookup', req.url, req.project, caller),
    application: req.application,
  };
  const rows = await credentialsForUrl(db, normalizeRepoUrl(req.url));
  const decision = selectForProject(rows, req.url, req.project);
  const row = decision.chosen;
  const decided = {
    ...base,
    candidates: candidatesOf(decision.considered),
    chosen_id: row?.id ?? null,
    reason: decision.reason,
  };
  let credential: CheckoutCredential | null = null;
  try {
    if (row) credential = checkoutCredential(keyring, row);
  } catch (err) {
    await recordDecision(db, { ...decided, outcome: 'error', message: messageOf(err) });
    throw err;
  }
  const recorded = recordDecision(db, { ...decided, outcome: 'allow' });
  // Observed here so a caller that fails first leaves no unhandled rejection behind.
  recorded.catch(() => undefined);
  return { credential, credentialId: row?.id ?? null, reason: decision.reason, recorded };
}

/** The credential as a checkout uses it, its secret opened. */
function checkoutCredential(keyring: Keyring, row: CredentialRow): CheckoutCredential {
  const secret = openCredentialSecret(keyring, row);
  return {
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

/** The api's get and delete: the one credential of `rows` for `url` and `project`, or a refusal audited. */
export async function resolveOrRefuse(
  db: Kysely<RepoDatabase>,
  rows: CredentialRow[],
  target: { url: string; project: string },
  base: Decision,
): Promise<CredentialRow> {
  const { url, project } = target;
  const resolution = resolveForApi(rows, url, project);
  if (resolution.outcome === 'found') return resolution.credential;
  const candidates = candidatesOf(resolution.considered);
  const ambiguous = resolution.outcome === 'ambiguous';
  // The projects stay in the audit row: the caller may not see them all (the api names the ones it may).
  const err = ambiguous
    ? new FailedPreconditionError(`several credentials exist for ${redactRepoUrl(url)}; name the project`)
    : new NotFoundError(`no credential for ${redactRepoUrl(url)}${project ? ` in project ${project}` : ''}`);
  await recordDecision(db, {
    ...base,
    candidates,
    reason: ambiguous ? 'ambiguous' : 'not-found',
    outcome: 'deny',
    message: err.message,
  });
  throw err;
}
