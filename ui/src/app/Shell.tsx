// The frame of every page: skip link, navigation, the user's menu (name and groups, shown, not
// hidden in a tooltip: they decide what RBAC allows), logout, theme.
import type { ReactNode } from 'react';
import { Popover } from 'radix-ui';
import { Link, useLocation } from 'wouter';
import { ThemeToggle } from './theme';
import { useLogout, type UserInfo } from '../auth/session';

const NAV = [
  { href: '/applications', label: 'Applications' },
  { href: '/applicationsets', label: 'ApplicationSets' },
  { href: '/projects', label: 'Projects' },
  { href: '/repositories', label: 'Repositories' },
  { href: '/clusters', label: 'Clusters' },
  { href: '/accounts', label: 'Accounts' },
  { href: '/audit', label: 'Audit' },
];

/** A section is current on its own path and below it (/applications is not current on /applicationsets). */
export const current = (location: string, href: string) =>
  location === href || location.startsWith(`${href}/`);

/** The groups as the top bar shows them: the first few, then how many more. */
export function groupsSummary(groups: readonly string[], shown = 2): string {
  if (groups.length === 0) return 'no groups';
  const head = groups.slice(0, shown).join(', ');
  return groups.length > shown ? `${head} +${groups.length - shown}` : head;
}

export function UserMenu({ user }: { user: UserInfo }) {
  const groups = user.groups ?? [];
  return (
    <Popover.Root>
      <Popover.Trigger asChild>
        <button type="button" className="button ghost user">
          <span className="user-name">{user.username}</span>{' '}
          <span className="user-groups">({groupsSummary(groups)})</span>
        </button>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content className="popover" align="end" sideOffset={6}>
          <p>
            Signed in as <strong>{user.username}</strong>
          </p>
          <p className="muted" id="user-groups-title">
            Groups
          </p>
          {groups.length === 0 ? (
            <p>none</p>
          ) : (
            <ul aria-labelledby="user-groups-title" className="group-list">
              {groups.map((g) => (
                <li key={g}>{g}</li>
              ))}
            </ul>
          )}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}

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
        <UserMenu user={user} />
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
