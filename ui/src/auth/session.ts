// Who is logged in (GET /api/v1/session/userinfo with the session cookie), log in and log out.
// Login asks the api for a cookie session (X-Capstan-Session: cookie): the response carries no
// token, only its expiry; the HttpOnly cookie holds the token.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { isUnauthenticated } from '../api/errors';

export interface UserInfo {
  loggedIn?: boolean;
  username?: string;
  groups?: string[];
}

export const USERINFO_KEY = ['userinfo'] as const;

export function useUserInfo() {
  return useQuery({
    queryKey: USERINFO_KEY,
    queryFn: async (): Promise<UserInfo> => {
      try {
        return unwrap(await api.GET('/api/v1/session/userinfo')) as UserInfo;
      } catch (e) {
        if (isUnauthenticated(e)) return { loggedIn: false };
        throw e;
      }
    },
    staleTime: 60_000,
  });
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
