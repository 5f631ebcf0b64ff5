import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { empty, int, implement, op, str, strList } from '../operation.js';
import { accountView, tokenView } from '../views.js';
import type { SsoSession } from '../../sso/sso.service.js';

const accountQuery = z.strictObject({ name: str });

export const sessionOperations = implement<apiv1.SessionServiceServer>(apiv1.SessionServiceService, {
  create: op({
    http: { method: 'POST', path: '/api/v1/session' },
    auth: 'public',
    summary: 'log in with a local account; returns a short-lived session token',
    input: z.strictObject({
      username: z.string().min(1, 'required').max(253, 'at most 253 characters'),
      password: z.string().min(1, 'required').max(1024, 'at most 1024 characters'),
    }),
    request: apiv1.SessionCreateRequest,
    response: apiv1.SessionResponse,
    run: async (s, ctx, i) => {
      const r = await s.accounts.login(ctx, i.username, i.password);
      return { token: r.token, expiresAt: r.expiresAt.toISOString() };
    },
  }),
  delete: op({
    http: { method: 'DELETE', path: '/api/v1/session' },
    auth: 'user',
    summary: 'log out: revoke the presented token',
    input: empty,
    request: apiv1.Empty,
    response: apiv1.Empty,
    run: async (s, ctx) => {
      await s.accounts.logout(ctx);
      return {};
    },
  }),
  getUserInfo: op({
    http: { method: 'GET', path: '/api/v1/session/userinfo' },
    auth: 'user',
    summary: 'who the token belongs to',
    input: empty,
    request: apiv1.Empty,
    response: apiv1.UserInfo,
    run: async (_s, ctx) => ({
      loggedIn: true,
      username: ctx.principal.name,
      groups: ctx.principal.groups,
      issuer: 'capstan',
    }),
  }),
  getSsoConfig: op({
    http: { method: 'GET', path: '/api/v1/session/sso' },
    auth: 'public',
    summary: 'the single sign-on provider the CLI logs in with (enabled false without oidc.config)',
    input: empty,
    request: apiv1.Empty,
    response: apiv1.SsoConfig,
    run: (s) => s.sso.cliConfig(),
  }),
  createSso: op({
    http: { method: 'POST', path: '/api/v1/session/sso' },
    auth: 'public',
    summary: "the CLI's OIDC login: exchanges the authorization code (PKCE) and returns a session",
    input: z.strictObject({
      code: z.string().min(1, 'required').max(4096),
      codeVerifier: z.string().min(43, 'at least 43 characters (RFC 7636)').max(128),
      redirectUri: z.string().min(1, 'required').max(200),
      nonce: z.string().min(1, 'required').max(200),
    }),
    request: apiv1.SsoSessionRequest,
    response: apiv1.SsoSessionResponse,
    run: async (s, ctx, i) => ssoView(await s.sso.cliLogin(ctx, i)),
  }),
  refresh: op({
    http: { method: 'POST', path: '/api/v1/session/refresh' },
    auth: 'public',
    summary: 'a new single sign-on session for a refresh token (the provider is asked again)',
    input: z.strictObject({ refreshToken: z.string().min(1, 'required').max(16_384) }),
    request: apiv1.SessionRefreshRequest,
    response: apiv1.SsoSessionResponse,
    run: async (s, ctx, i) => ssoView(await s.sso.refresh(ctx, i.refreshToken)),
  }),
});

function ssoView(r: SsoSession) {
  return {
    token: r.token,
    expiresAt: r.expiresAt.toISOString(),
    refreshToken: r.refreshToken,
    username: r.username,
    groups: r.groups,
  };
}

export const accountOperations = implement<apiv1.AccountServiceServer>(apiv1.AccountServiceService, {
  list: op({
    http: { method: 'GET', path: '/api/v1/account' },
    auth: 'user',
    summary: 'list local accounts',
    input: empty,
    request: apiv1.Empty,
    response: apiv1.AccountList,
    run: async (s, ctx) => ({ items: (await s.accounts.list(ctx)).map(accountView) }),
  }),
  canI: op({
    http: { method: 'GET', path: '/api/v1/account/can-i/:resource/:action/:subresource' },
    auth: 'user',
    summary: 'whether the caller may do action on resource/object (argocd account can-i)',
    input: z.strictObject({
      resource: z.string().min(1, 'required'),
      action: z.string().min(1, 'required'),
      subresource: str,
    }),
    request: apiv1.CanIRequest,
    response: apiv1.CanIResponse,
    run: async (s, ctx, i) => ({
      value: s.accounts.canI(ctx, i.resource, i.action, i.subresource) ? 'yes' : 'no',
    }),
  }),
  updatePassword: op({
    http: { method: 'PUT', path: '/api/v1/account/password' },
    auth: 'user',
    summary: "change a password (one's own needs the current one)",
    input: z.strictObject({ name: str, currentPassword: str, newPassword: z.string().min(1, 'required') }),
    request: apiv1.UpdatePasswordRequest,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.accounts.updatePassword(ctx, i);
      return {};
    },
  }),
  get: op({
    http: { method: 'GET', path: '/api/v1/account/:name' },
    auth: 'user',
    summary: 'get a local account (empty name: the caller)',
    input: accountQuery,
    request: apiv1.AccountQuery,
    response: apiv1.Account,
    run: async (s, ctx, i) => accountView(await s.accounts.get(ctx, i.name)),
  }),
  create: op({
    http: { method: 'POST', path: '/api/v1/account' },
    auth: 'user',
    summary: 'create a local account',
    input: z.strictObject({
      name: z.string().min(1, 'required'),
      password: str,
      capabilities: strList,
      groups: strList,
    }),
    request: apiv1.AccountCreateRequest,
    response: apiv1.Account,
    run: async (s, ctx, i) => accountView(await s.accounts.create(ctx, i)),
  }),
  delete: op({
    http: { method: 'DELETE', path: '/api/v1/account/:name' },
    auth: 'user',
    summary: 'delete a local account and revoke its tokens',
    input: z.strictObject({ name: z.string().min(1, 'required') }),
    request: apiv1.AccountQuery,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.accounts.delete(ctx, i.name);
      return {};
    },
  }),
  createToken: op({
    http: { method: 'POST', path: '/api/v1/account/:name/token' },
    auth: 'user',
    summary: 'create a long-lived API token (shown once)',
    input: z.strictObject({ name: str, expiresIn: int, id: str }),
    request: apiv1.CreateTokenRequest,
    response: apiv1.CreateTokenResponse,
    run: async (s, ctx, i) => s.accounts.createToken(ctx, i),
  }),
  listTokens: op({
    http: { method: 'GET', path: '/api/v1/account/:name/token' },
    auth: 'user',
    summary: "list an account's API tokens (ids and dates only)",
    input: accountQuery,
    request: apiv1.AccountQuery,
    response: apiv1.TokenList,
    run: async (s, ctx, i) => ({ items: (await s.accounts.listTokens(ctx, i.name)).map(tokenView) }),
  }),
  deleteToken: op({
    http: { method: 'DELETE', path: '/api/v1/account/:name/token/:id' },
    auth: 'user',
    summary: 'revoke an API token',
    input: z.strictObject({ name: str, id: z.string().min(1, 'required') }),
    request: apiv1.DeleteTokenRequest,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.accounts.deleteToken(ctx, i.name, i.id);
      return {};
    },
  }),
});
