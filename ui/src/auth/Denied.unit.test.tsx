import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Denied } from './Denied';
import { ApiError } from '../api/errors';
import { USERINFO_KEY } from './session';
import { QueryState } from '../app/QueryState';

function withUser(ui: React.ReactNode) {
  const qc = new QueryClient();
  qc.setQueryData(USERINFO_KEY, { loggedIn: true, username: 'user-b', groups: ['tenant-b'] });
  return render(<QueryClientProvider client={qc}>{ui}</QueryClientProvider>);
}

describe('denial page', () => {
  it("says who was refused what, with the api's message and the user's groups", () => {
    const error = new ApiError(403, {
      code: 'PERMISSION_DENIED',
      message: 'permission denied: applications, get, team-a/guestbook',
    });
    withUser(<Denied error={error} what="get the Application guestbook" />);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('user-b may not get the Application guestbook');
    expect(alert.textContent).toContain('applications, get, team-a/guestbook');
    expect(alert.textContent).toContain('tenant-b');
  });

  it('is what a query refused with 403 shows; another error shows its message', () => {
    const denied = new ApiError(403, { message: 'permission denied' });
    withUser(
      <QueryState isPending={false} error={denied} what="list projects">
        {() => 'content'}
      </QueryState>,
    );
    expect(screen.getByRole('heading', { name: 'Permission denied' })).toBeTruthy();
  });

  it('shows an invalid request as its message, not as a denial', () => {
    withUser(
      <QueryState
        isPending={false}
        error={new ApiError(400, { message: 'limit: must not be negative' })}
        what="x"
      >
        {() => 'content'}
      </QueryState>,
    );
    expect(screen.getByRole('alert').textContent).toBe('limit: must not be negative');
    expect(screen.queryByRole('heading', { name: 'Permission denied' })).toBeNull();
  });
});
