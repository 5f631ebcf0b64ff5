import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { LoginPage } from './LoginPage';
import { SSO_KEY, ssoLoginHref } from './session';

function withSso(config: { enabled: boolean; name?: string }) {
  const qc = new QueryClient();
  qc.setQueryData(SSO_KEY, config);
  return render(
    <QueryClientProvider client={qc}>
      <LoginPage />
    </QueryClientProvider>,
  );
}

describe('login page', () => {
  it('offers the single sign-on provider when one is configured, returning to the page', () => {
    window.history.pushState({}, '', '/applications/argocd/guestbook?tab=identity');
    withSso({ enabled: true, name: 'Dex' });
    const link = screen.getByRole('link', { name: 'Log in with Dex' });
    expect(link.getAttribute('href')).toBe(
      '/auth/login?return_url=%2Fapplications%2Fargocd%2Fguestbook%3Ftab%3Didentity',
    );
    expect(screen.getByRole('button', { name: 'Log in' })).toBeTruthy();
  });

  it('shows only the local login without a provider', () => {
    withSso({ enabled: false });
    expect(screen.queryByRole('link')).toBeNull();
    expect(ssoLoginHref('/')).toBe('/auth/login?return_url=%2F');
  });
});
