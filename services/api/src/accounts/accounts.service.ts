// Local accounts, login sessions and API tokens. The bootstrap admin is created on first start with
// the configured password, or a generated one that is kept in a mode-600 file (never printed or logged).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  AlreadyExistsError,
  CapstanError,
  NotFoundError,
  PermissionDeniedError,
  UnauthenticatedError,
  ValidationError,
} from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { TokenSigner } from '../auth/tokens.js';
import type { RequestContext } from '../support/request.js';
import { invalid } from '../support/validation.js';
import type { LoginThrottle } from './login-throttle.js';
import { generatePassword, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import {
  countAccounts,
  deleteAccount,
  deleteApiToken,
  findAccount,
  insertAccount,
  insertApiToken,
  listAccounts,
  listApiTokens,
  revokeToken,
  updatePasswordHash,
  type AccountRecord,
  type ApiTokenRecord,
} from './account.repository.js';
import { effectiveAccount } from '../settings/argo-accounts.js';
import type { ArgoObjectsInForce } from '../settings/objects-in-force.js';
import { REFRESH_TTL_SECONDS } from '../sso/sso-tokens.js';
import { recordLogout } from '../sso/sso-subjects.js';

const ACCOUNT_NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;
const CAPABILITIES = new Set(['login', 'apiKey']);

export interface AccountView extends Omit<AccountRecord, 'passwordHash'> {
  tokens: ApiTokenRecord[];
}

export class AccountsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      /** argocd-cm in force: admin.enabled, accounts.<name>[.enabled]. */
      objects: ArgoObjectsInForce;
      authz: Authorizer;
      authn: Authenticator;
      signer: TokenSigner;
      sessionTtlSeconds: number;
      throttle: LoginThrottle;
      failureWindowSeconds: number;
    },
  ) {}

  /**
   * First start: an admin account. A generated password is handed to `keep` (the mode-600 file)
   * before the account exists, so a password nobody can read is never created; when another replica
   * created the admin first, `discard` undoes `keep`.
   */
  async bootstrapAdmin(
    configuredPassword: string,
    generated: { keep(password: string): Promise<void>; discard(): Promise<void> },
  ): Promise<{ created: boolean; generated: boolean }> {
    if ((await countAccounts(this.deps.db)) > 0) return { created: false, generated: false };
    const password = configuredPassword || generatePassword();
    const problem = passwordProblem(password);
    if (problem) throw new ValidationError([{ field: 'auth.admin-password', description: problem }]);
    if (!configuredPassword) await generated.keep(password);
    const created = await insertAccount(this.deps.db, {
      name: 'admin',
      passwordHash: await hashPassword(password),
      enabled: true,
      capabilities: ['login', 'apiKey'],
      groups: [],
    });
    if (!created && !configuredPassword) await generated.discard();
    return { created, generated: created && !configuredPassword };
  }

  async login(
    ctx: RequestContext,
    username: string,
    password: string,
  ): Promise<{ token: string; expiresAt: Date }> {
    // One message for every failure, so a caller cannot probe which accounts exist; every attempt is
    // audited. Throttled (LoginThrottle) per account and per source address, existing or not.
    const subject = { name: `login:${username.slice(0, 200)}` };
    const keys = { account: username, address: ctx.peer };
    const locked = await this.deps.throttle.lockout(keys);
    if (locked) {
      const from = locked.key === 'address' ? `this address (${ctx.peer})` : 'this account';
      await this.deps.authz.record(subject, 'accounts', 'login', username.slice(0, 200), ctx.via, {
        allowed: false,
        reason: `locked out: ${locked.failures} failed logins from ${from} within ${this.deps.failureWindowSeconds} s`,
      });
      throw new CapstanError('RESOURCE_EXHAUSTED', 'too many failed logins; try again later');
    }
    const refuse = async (reason: string) => {
      await this.deps.throttle.fail(keys);
      await this.deps.authz.record(subject, 'accounts', 'login', username.slice(0, 200), ctx.via, {
        allowed: false,
        reason,
      });
      return new UnauthenticatedError('invalid username or password');
    };
    // argocd-cm's admin.enabled, accounts.<name>(.enabled) apply (settings/argo-accounts.ts).
    const account = await effectiveAccount(this.deps.objects, username);
    if (!account || !account.enabled || !account.passwordHash || !account.capabilities.includes('login')) {
      await verifyPassword(password, 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA').catch(() => false);
      throw await refuse(account ? 'account may not log in' : 'no such account');
    }
    if (!(await verifyPassword(password, account.passwordHash))) throw await refuse('wrong password');
    await this.deps.throttle.succeed(keys);
    await this.deps.authz.record(subject, 'accounts', 'login', account.name, ctx.via, {
      allowed: true,
      reason: 'password verified',
    });
    const ttl = this.deps.sessionTtlSeconds;
    const token = await this.deps.signer.sign({
      sub: account.name,
      kind: 'session',
      jti: randomUUID(),
      expiresInSeconds: ttl,
    });
    return { token, expiresAt: new Date(Date.now() + ttl * 1000) };
  }

  async logout(ctx: RequestContext): Promise<void> {
    const { tokenId, tokenExpiresAt, projectRole } = ctx.principal;
    if (projectRole)
      throw new PermissionDeniedError(
        `a project token is revoked with capstan proj role delete-token ${projectRole.project} ${projectRole.role} <id>`,
      );
    if (!tokenId) return;
    await revokeToken(this.deps.db, tokenId, tokenExpiresAt ?? null);
    this.deps.authn.noteRevoked(tokenId);
    if (!ctx.principal.sso) return;
    // A single sign-on session's refresh token goes with it, and its login chain ends.
    const refreshId = ctx.principal.sso.refreshId;
    if (refreshId) {
      await revokeToken(this.deps.db, refreshId, new Date(Date.now() + REFRESH_TTL_SECONDS * 1000));
      this.deps.authn.noteRevoked(refreshId);
    }
    await recordLogout(this.deps.db, ctx.principal.name, refreshId ?? tokenId);
    await this.deps.authz.record(ctx.principal, 'accounts', 'logout', ctx.principal.name, ctx.via, {
      allowed: true,
      reason: `single sign-on session ended (refresh token ${refreshId ? 'revoked' : 'none'})`,
    });
  }

  private view(a: AccountRecord, tokens: ApiTokenRecord[]): AccountView {
    const { passwordHash: _hash, ...rest } = a;
    return { ...rest, tokens };
  }

  private async mustFind(name: string): Promise<AccountRecord> {
    const a = await findAccount(this.deps.db, name);
    if (!a) throw new NotFoundError(`account ${name} not found`);
    return a;
  }

  async list(ctx: RequestContext): Promise<AccountView[]> {
    await this.deps.authz.check(ctx.principal, 'accounts', 'get', '*', ctx.via);
    return Promise.all(
      (await listAccounts(this.deps.db)).map(async (a) =>
        this.view(a, await listApiTokens(this.deps.db, a.name)),
      ),
    );
  }

  async get(ctx: RequestContext, name: string): Promise<AccountView> {
    const target = name || ctx.principal.name;
    if (target !== ctx.principal.name)
      await this.deps.authz.check(ctx.principal, 'accounts', 'get', target, ctx.via);
    const a = await this.mustFind(target);
    return this.view(a, await listApiTokens(this.deps.db, a.name));
  }

  async create(
    ctx: RequestContext,
    input: { name: string; password: string; capabilities: string[]; groups: string[] },
  ): Promise<AccountView> {
    await this.deps.authz.check(ctx.principal, 'accounts', 'create', input.name, ctx.via);
    if (!ACCOUNT_NAME.test(input.name) || input.name.length > 63)
      throw invalid('name', 'must be lowercase letters, digits, "-", "_" and "."');
    // The name audit rows give a call without a token (users.anonymous.enabled): no account takes it.
    if (input.name === 'anonymous') throw invalid('name', 'is reserved for calls without a token');
    const capabilities = input.capabilities.length > 0 ? input.capabilities : ['login'];
    const bad = capabilities.findIndex((c) => !CAPABILITIES.has(c));
    if (bad >= 0) throw invalid(`capabilities[${bad}]`, 'must be login or apiKey');
    const gbad = input.groups.findIndex((g) => g.trim() === '' || g.includes(','));
    if (gbad >= 0) throw invalid(`groups[${gbad}]`, 'must be a non-empty name without commas');
    let hash: string | null = null;
    if (input.password) {
      const problem = passwordProblem(input.password);
      if (problem) throw invalid('password', problem);
      hash = await hashPassword(input.password);
    } else if (capabilities.includes('login')) {
      throw invalid('password', 'required for an account that can log in');
    }
    const ok = await insertAccount(this.deps.db, {
      name: input.name,
      passwordHash: hash,
      enabled: true,
      capabilities,
      groups: input.groups,
    });
    if (!ok) throw new AlreadyExistsError(`account ${input.name} already exists`);
    return this.view(await this.mustFind(input.name), []);
  }

  async delete(ctx: RequestContext, name: string): Promise<void> {
    await this.deps.authz.check(ctx.principal, 'accounts', 'delete', name, ctx.via);
    if (name === ctx.principal.name) throw invalid('name', 'an account cannot delete itself');
    for (const t of await listApiTokens(this.deps.db, name)) {
      await revokeToken(this.deps.db, t.id, t.expiresAt);
      this.deps.authn.noteRevoked(t.id);
    }
    if (!(await deleteAccount(this.deps.db, name))) throw new NotFoundError(`account ${name} not found`);
    this.deps.authn.forgetAccount(name);
  }

  async updatePassword(
    ctx: RequestContext,
    input: { name: string; currentPassword: string; newPassword: string },
  ): Promise<void> {
    const target = input.name || ctx.principal.name;
    const self = target === ctx.principal.name && ctx.principal.kind === 'user';
    if (!self) await this.deps.authz.check(ctx.principal, 'accounts', 'update', target, ctx.via);
    const account = await this.mustFind(target);
    // Changing one's own password needs the current one, so a stolen session cannot lock its owner out.
    if (
      self &&
      !(account.passwordHash && (await verifyPassword(input.currentPassword, account.passwordHash)))
    ) {
      throw new PermissionDeniedError('current password is wrong');
    }
    const problem = passwordProblem(input.newPassword);
    if (problem) throw invalid('newPassword', problem);
    await updatePasswordHash(this.deps.db, target, await hashPassword(input.newPassword));
    this.deps.authn.forgetAccount(target);
  }

  async createToken(
    ctx: RequestContext,
    input: { name: string; expiresIn: number; id: string },
  ): Promise<{ token: string; id: string }> {
    const target = input.name || ctx.principal.name;
    if (target !== ctx.principal.name || ctx.principal.kind !== 'user') {
      await this.deps.authz.check(ctx.principal, 'accounts', 'update', target, ctx.via);
    }
    await this.mustFind(target);
    const account = (await effectiveAccount(this.deps.objects, target))!;
    if (!account.capabilities.includes('apiKey'))
      throw invalid('name', `account ${target} does not have the apiKey capability`);
    if (input.expiresIn < 0) throw invalid('expiresIn', 'must not be negative');
    if (input.id && !/^[A-Za-z0-9._-]{1,64}$/.test(input.id))
      throw invalid('id', 'must be 1-64 characters of [A-Za-z0-9._-]');
    const id = input.id || randomUUID();
    const expiresAt = input.expiresIn > 0 ? new Date(Date.now() + input.expiresIn * 1000) : null;
    if (!(await insertApiToken(this.deps.db, { id, account: target, issuedAt: new Date(), expiresAt }))) {
      throw new AlreadyExistsError(`token ${id} already exists`);
    }
    const token = await this.deps.signer.sign({
      sub: target,
      kind: 'api',
      jti: id,
      expiresInSeconds: input.expiresIn || undefined,
    });
    return { token, id };
  }

  async listTokens(ctx: RequestContext, name: string): Promise<ApiTokenRecord[]> {
    const target = name || ctx.principal.name;
    if (target !== ctx.principal.name)
      await this.deps.authz.check(ctx.principal, 'accounts', 'get', target, ctx.via);
    await this.mustFind(target);
    return listApiTokens(this.deps.db, target);
  }

  async deleteToken(ctx: RequestContext, name: string, id: string): Promise<void> {
    const target = name || ctx.principal.name;
    if (target !== ctx.principal.name || ctx.principal.kind !== 'user') {
      await this.deps.authz.check(ctx.principal, 'accounts', 'update', target, ctx.via);
    }
    const removed = await deleteApiToken(this.deps.db, target, id);
    if (!removed) throw new NotFoundError(`token ${id} of account ${target} not found`);
    await revokeToken(this.deps.db, id, removed.expiresAt);
    this.deps.authn.noteRevoked(id);
  }

  /** argocd account can-i: answers for the caller, records nothing (it changes nothing). */
  canI(ctx: RequestContext, resource: string, action: string, object: string): boolean {
    return this.deps.authz.decide(ctx.principal, resource, action, object).allowed;
  }
}
