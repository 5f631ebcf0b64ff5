import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReactNode } from 'react';
import { act, renderHook, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { answer, calls } from '../test-support/http';
import { KEEP_ALIVE_MS, USERINFO_KEY, useSessionKeepAlive, useUserInfo } from './session';

function wrapper() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const Wrap = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>{children}</QueryClientProvider>
  );
  return { client, Wrap };
}

const refreshes = () => calls.filter((c) => c.method === 'POST' && c.path === '/auth/refresh').length;

afterEach(() => vi.useRealTimers());

describe('the single sign-on session is kept alive while the UI is open', () => {
  it('asks the api to renew every KEEP_ALIVE_MS while logged in, and asks who is logged in when nothing is left', async () => {
    vi.useFakeTimers();
    let alive = true;
    answer((c) => (c.path === '/auth/refresh' ? { status: alive ? 200 : 401, body: {} } : undefined));
    const { client, Wrap } = wrapper();
    client.setQueryData(USERINFO_KEY, { loggedIn: true, username: 'alice' });
    const { rerender } = renderHook(({ on }) => useSessionKeepAlive(on), {
      wrapper: Wrap,
      initialProps: { on: true },
    });
    expect(refreshes()).toBe(0);
    await act(() => vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS));
    expect(refreshes()).toBe(1);
    alive = false;
    await act(() => vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS));
    expect(refreshes()).toBe(2);
    expect(client.getQueryState(USERINFO_KEY)?.isInvalidated).toBe(true);
    // Logged out: no more renewals.
    rerender({ on: false });
    await act(() => vi.advanceTimersByTimeAsync(3 * KEEP_ALIVE_MS));
    expect(refreshes()).toBe(2);
  });

  it('renews a session that ended while the page slept, then asks again who is logged in', async () => {
    let renewed = false;
    answer((c) => {
      if (c.path === '/auth/refresh') {
        renewed = true;
        return { body: { renewed: true, expiresAt: new Date().toISOString() } };
      }
      if (c.path === '/api/v1/session/userinfo')
        return renewed
          ? { body: { loggedIn: true, username: 'alice' } }
          : { status: 401, body: { code: 'UNAUTHENTICATED', message: 'token expired' } };
      return undefined;
    });
    const { Wrap } = wrapper();
    const { result } = renderHook(() => useUserInfo(), { wrapper: Wrap });
    await waitFor(() => expect(result.current.data).toEqual({ loggedIn: true, username: 'alice' }));
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /api/v1/session/userinfo',
      'POST /auth/refresh',
      'GET /api/v1/session/userinfo',
    ]);
  });

  it('shows the login page when there is nothing to renew (a local session that ended)', async () => {
    answer((c) =>
      c.path === '/auth/refresh' || c.path === '/api/v1/session/userinfo'
        ? { status: 401, body: { code: 'UNAUTHENTICATED', message: 'log in again' } }
        : undefined,
    );
    const { Wrap } = wrapper();
    const { result } = renderHook(() => useUserInfo(), { wrapper: Wrap });
    await waitFor(() => expect(result.current.data).toEqual({ loggedIn: false }));
    expect(refreshes()).toBe(1);
  });
});
