// Who is logged in (GET /api/v1/session/userinfo with the session cookie), log in and log out.
// Login asks the api for a cookie session (X-Capstan-Session: cookie): the response carries no
// token, only its expiry; the HttpOnly cookie holds the token. A single sign-on session is kept
// alive while the UI is open: the api's POST /auth/refresh renews it near its end with the HttpOnly
// refresh cookie (sent to that path only; no script ever reads it), as the CLI refreshes its own.
import { useEffect } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { isUnauthenticated } from '../api/errors';

export interface UserInfo {
  loggedIn?: boolean;
  username?: string;
  groups?: string[];
}

export const USERINFO_KEY = ['userinfo'] as const;

/** How often an open UI asks the api to renew its session (the api renews only near the end). */
export const KEEP_ALIVE_MS = 30_000;

/**
 * POST /auth/refresh (docs/sso.md): the api answers the session's expiry, renewing the session
 * and refresh cookies first when the session is near its end or gone. False: no session to keep.
 */
export async function keepSessionAlive(): Promise<boolean> {
  const origin = typeof window === 'undefined' ? 'http://localhost' : window.location.origin;
  const res = await fetch(`${origin}/auth/refresh`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'x-capstan-session': 'cookie' },
  });
  return res.ok;
}

const userInfo = async (): Promise<UserInfo> => unwrap(await api.GET('/api/v1/session/userinfo')) as UserInfo;

export function useUserInfo() {
  return useQuery({
    queryKey: USERINFO_KEY,
    queryFn: async (): Promise<UserInfo> => {
      try {
        return await userInfo();
      } catch (e) {
        if (!isUnauthenticated(e)) throw e;
        // The session ended while the page slept: a single sign-on refresh cookie may renew it.
        if (!(await keepSessionAlive().catch(() => false))) return { loggedIn: false };
        return userInfo().catch((again: unknown) => {
          if (isUnauthenticated(again)) return { loggedIn: false };
          throw again;
        });
      }
    },
    staleTime: 60_000,
  });
}

/** While logged in: renews the session every KEEP_ALIVE_MS and when the page is shown again. */
export function useSessionKeepAlive(loggedIn: boolean) {
  const qc = useQueryClient();
  useEffect(() => {
    if (!loggedIn) return;
    const tick = () =>
      void keepSessionAlive().then(
        (alive) => {
          // Nothing left to renew: who is logged in is asked again (the login page shows if no one).
          if (!alive) void qc.invalidateQueries({ queryKey: USERINFO_KEY });
        },
        () => undefined,
      );
    const timer = setInterval(tick, KEEP_ALIVE_MS);
    const shown = () => {
      if (document.visibilityState === 'visible') tick();
    };
    document.addEventListener('visibilitychange', shown);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, [loggedIn, qc]);
}

export const SSO_KEY = ['sso-config'] as const;

/** The single sign-on provider (docs/sso.md), when argocd-cm configures one. */
export function useSsoConfig() {
  return useQuery({
    queryKey: SSO_KEY,
    queryFn: async (): Promise<{ enabled?: boolean; name?: string }> =>
      unwrap(await api.GET('/api/v1/session/sso')) as { enabled?: boolean; name?: string },
    staleTime: 60_000,
  });
}

/** Where the browser starts a single sign-on login (the api's /auth/login), returning to `path`. */
export function ssoLoginHref(path: string): string {
  return `/auth/login?return_url=${encodeURIComponent(path)}`;
}

export function useLogin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (v: { username: string; password: string }) =>
      unwrap(
        await api.POST('/api/v1/session', {
          body: v,
          params: { header: { 'x-capstan-session': 'cookie' } },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: USERINFO_KEY }),
  });
}

export function useLogout() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/api/v1/session')),
    onSettled: () => {
      // Nothing of the session stays in memory: every cached answer goes, the login page shows.
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== USERINFO_KEY[0] });
      qc.setQueryData<UserInfo>(USERINFO_KEY, { loggedIn: false });
    },
  });
}
