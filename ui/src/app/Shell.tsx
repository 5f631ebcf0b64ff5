// The frame of every page: skip link, navigation, the user's name and groups, logout, theme.
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { ThemeToggle } from './theme';
import { useLogout, type UserInfo } from '../auth/session';

const NAV = [
  { href: '/applications', label: 'Applications' },
  { href: '/applicationsets', label: 'ApplicationSets' },
  { href: '/projects', label: 'Projects' },
  { href: '/repositories', label: 'Repositories' },
  { href: '/audit', label: 'Audit' },
];

/** A section is current on its own path and below it (/applications is not current on /applicationsets). */
export const current = (location: string, href: string) =>
  location === href || location.startsWith(`${href}/`);

export function Shell({ user, children }: { user: UserInfo; children: ReactNode }) {
  const [location] = useLocation();
  const logout = useLogout();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Capstan</span>
        <nav aria-label="main">
          {NAV.map((n) => (
            <Link key={n.href} href={n.href} aria-current={current(location, n.href) ? 'page' : undefined}>
              {n.label}
            </Link>
          ))}
        </nav>
        <span className="user" title={(user.groups ?? []).join(', ')}>
          {user.username}
        </span>
        <ThemeToggle />
        <button type="button" className="button ghost" onClick={() => logout.mutate()}>
          Log out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
