// Who calls the api (session and API tokens, delegations, service identities) and what they may do
// (RBAC, audited): the keys they rest on are loaded or generated once, kept sealed.
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { ServiceContext } from '@capstan/service';
import type { Keyring } from '@capstan/sealing';
import { ServiceTokens } from '@capstan/service-identity';
import type { ApiDatabase } from '../support/db.table.js';
import type { ApiConfig } from '../api-service.js';
import { loadSigningKey } from '../auth/signing-key.js';
import { TokenSigner } from '../auth/tokens.js';
import { Delegations, loadDelegationKey } from '../auth/delegations.js';
import { Authenticator } from '../auth/authenticator.js';
import { PolicyStore } from '../rbac/policy-store.js';
import { Authorizer } from '../rbac/authorizer.js';
import { DeliveringApplications } from '../delivery/delivering-applications.js';
import { pinnedBy } from './settings-view.js';
import { ArgoObjectsInForce } from '../settings/objects-in-force.js';

export interface AccessControl {
  db: Kysely<ApiDatabase>;
  signer: TokenSigner;
  delegations: Delegations;
  deliverers: DeliveringApplications;
  authn: Authenticator;
  policy: PolicyStore;
  authz: Authorizer;
  /** Argo CD's objects in force: applied, else the files given at start (--argocd-config-dir). */
  objects: ArgoObjectsInForce;
}

export async function startAccessControl(
  ctx: ServiceContext<ApiConfig>,
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
): Promise<AccessControl> {
  const config = ctx.config;
  const signer = new TokenSigner(await loadSigningKey(db, keyring, config['auth.signing-key']));
  const delegations = await startDelegations(ctx, db, keyring);
  const deliverers = new DeliveringApplications(db);
  const serviceTokens = new ServiceTokens(config['auth.service-tokens']);
  const objects = new ArgoObjectsInForce(db, ctx.configReport?.argoFiles);
  const authn = new Authenticator({ db, objects, signer, serviceTokens, delegations, deliverers });
  await authn.start();
  ctx.onShutdown('authenticator', () => authn.stop());
  const pinned = pinnedBy(ctx);
  const policy = new PolicyStore({
    db,
    policyFile: config['rbac.policy-file'],
    policyCsv: config['rbac.policy-csv'],
    defaultRole: config['rbac.default-role'],
    pinned: { policyCsv: pinned('rbac.policy-csv'), defaultRole: pinned('rbac.default-role') },
  });
  await policy.start();
  ctx.onShutdown('policy', () => policy.stop());
  const authz = new Authorizer(db as unknown as Kysely<unknown>, policy, ctx.logger);
  ctx.onShutdown('access audit', () => authz.stop());
  return { db, signer, delegations, deliverers, authn, policy, authz, objects };
}

/** Delegations signed with the configured key (auth.delegation-key or -file), else a generated one kept sealed. */
async function startDelegations(
  ctx: ServiceContext<ApiConfig>,
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
): Promise<Delegations> {
  const config = ctx.config;
  const configured =
    config['auth.delegation-key'] ||
    (config['auth.delegation-key-file'] ? readFileSync(config['auth.delegation-key-file'], 'utf8') : '');
  const delegationKey = await loadDelegationKey(db, keyring, configured);
  const delegations = new Delegations(delegationKey.key, db, config['auth.delegation-ttl-seconds']);
  if (delegationKey.generated)
    ctx.logger.info(
      { publicKey: delegations.publicKeyPem },
      'delegation key generated and kept sealed; give its public key to repo (auth.delegation-public-key)',
    );
  return delegations;
}
