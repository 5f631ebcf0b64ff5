// Login with a local account, or through the single sign-on provider when one is configured (a
// plain link to the api's /auth/login: the browser goes to the provider and comes back with the
// session cookie). The api answers with an HttpOnly cookie; nothing here keeps a token.
import { useState, type FormEvent } from 'react';
import { ssoLoginHref, useLogin, useSsoConfig } from './session';
import { ThemeToggle } from '../app/theme';

export function LoginPage() {
  const login = useLogin();
  const sso = useSsoConfig();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate({ username, password });
  };
  return (
    <main className="login" id="main">
      <div className="login-card">
        <div className="login-head">
          <h1>Capstan</h1>
          <ThemeToggle />
        </div>
        <form onSubmit={submit} aria-describedby={login.error ? 'login-error' : undefined}>
          <label htmlFor="username">Username</label>
          <input
            id="username"
            autoComplete="username"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            required
          />
          <label htmlFor="password">Password</label>
          <input
            id="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
          {login.error && (
            <p id="login-error" role="alert" className="error">
              {login.error.message}
            </p>
          )}
          <button type="submit" className="button primary" disabled={login.isPending}>
            {login.isPending ? 'Logging in…' : 'Log in'}
          </button>
        </form>
        {sso.data?.enabled && (
          <a className="button" href={ssoLoginHref(window.location.pathname + window.location.search)}>
            Log in with {sso.data.name || 'SSO'}
          </a>
        )}
      </div>
    </main>
  );
}
