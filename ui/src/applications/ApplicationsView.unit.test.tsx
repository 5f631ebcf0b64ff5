import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import type { Application } from '../api/views';
import { ApplicationsView } from './ApplicationsPage';

const many = (n: number): Application[] =>
  Array.from({ length: n }, (_, i) => ({
    metadata: { name: `app-${String(i).padStart(5, '0')}`, namespace: 'argocd' },
    spec: {
      project: i % 2 ? 'team-a' : 'team-b',
      destination: { server: 'https://kubernetes.default.svc', namespace: `ns-${i % 3}` },
    },
    status: { sync: { status: i % 5 ? 'Synced' : 'OutOfSync' }, health: { status: 'Healthy' } },
  }));

function renderAt(apps: Application[], path = '/applications') {
  const location = memoryLocation({ path, record: true });
  render(
    <Router hook={location.hook} searchHook={location.searchHook}>
      <ApplicationsView apps={apps} />
    </Router>,
  );
  return location;
}

describe('ApplicationsView', () => {
  it('renders 10,000 Applications as a window of rows, with counts', () => {
    renderAt(many(10_000));
    expect(screen.getByText('10000 of 10000 Applications')).toBeTruthy();
    const rows = within(screen.getByRole('region', { name: 'applications' })).getAllByRole('listitem');
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(100);
    const sync = screen.getByRole('group', { name: 'sync' });
    expect(within(sync).getByText('OutOfSync').parentElement!.textContent).toContain('2000');
  });

  it('filters by a facet from the keyboard and keeps the filter in the URL', async () => {
    const user = userEvent.setup();
    const location = renderAt(many(100));
    const box = within(screen.getByRole('group', { name: 'sync' })).getByRole('checkbox', {
      name: /OutOfSync/,
    });
    box.focus();
    await user.keyboard(' ');
    expect(screen.getByText('20 of 100 Applications')).toBeTruthy();
    expect(location.history?.at(-1)).toBe('/applications?sync=OutOfSync');
    await user.type(screen.getByRole('searchbox', { name: 'Search' }), '00005');
    expect(screen.getByText('1 of 100 Applications')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'app-00005' }).getAttribute('href')).toBe(
      '/applications/argocd/app-00005',
    );
  });

  it('starts from the filters of a deep link', () => {
    renderAt(many(100), '/applications?project=team-a&search=app-0001');
    expect(screen.getByText('5 of 100 Applications')).toBeTruthy();
  });
});
