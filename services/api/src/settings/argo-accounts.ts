// Argo CD's account keys of the argocd-cm in force (applied, else given as a file at start), over the accounts Capstan stores: `admin.enabled`,
// `accounts.<name>.enabled` enable or disable an account, `accounts.<name>` (`apiKey, login`) gives
// its capabilities, as in Argo CD. An account is still created with `capstan account create` (a key
// for an account that does not exist changes nothing). Read at every login and request (the
// authenticator caches an account for 2 s), so a change is live.
import { readArgoValue } from '@capstan/policy';
import { findAccount, type AccountRecord } from '../accounts/account.repository.js';
import type { ArgoObjectsInForce } from './objects-in-force.js';

/** The account as argocd-cm's keys make it (a pure function of the record and the data). */
export function withArgoAccountKeys(
  account: AccountRecord,
  data: Readonly<Record<string, string>>,
): AccountRecord {
  const out = { ...account };
  const enabledKey = account.name === 'admin' ? 'admin.enabled' : `accounts.${account.name}.enabled`;
  const enabled = data[enabledKey] === undefined ? undefined : readArgoValue('bool', data[enabledKey]);
  if (enabled && 'value' in enabled) out.enabled = out.enabled && (enabled.value as boolean);
  const capsText = data[`accounts.${account.name}`];
  const caps = capsText === undefined ? undefined : readArgoValue('capabilities', capsText);
  if (caps && 'value' in caps) out.capabilities = caps.value as string[];
  return out;
}

/**
 * argocd-cm's `users.anonymous.enabled` (Argo CD's meaning): a call without a token is served as the
 * anonymous user, whose rights are `policy.default` alone. Off unless the key says "true".
 */
export function anonymousEnabled(data: Readonly<Record<string, string>> | undefined): boolean {
  const text = data?.['users.anonymous.enabled'];
  if (text === undefined) return false;
  const read = readArgoValue('bool', text);
  return 'value' in read && read.value === true;
}

/** findAccount, with the account keys of the argocd-cm in force (applied, else the file given at start). */
export async function effectiveAccount(
  objects: ArgoObjectsInForce,
  name: string,
): Promise<AccountRecord | undefined> {
  const [account, cm] = await Promise.all([findAccount(objects.db, name), objects.data('argocd-cm')]);
  return account && cm ? withArgoAccountKeys(account, cm) : account;
}
