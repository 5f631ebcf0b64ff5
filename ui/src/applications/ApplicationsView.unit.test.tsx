import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import type { Application } from '../api/views';
import { ApplicationsView } from './ApplicationsPage';
import { columnsFor } from './ApplicationTiles';

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

describe('tiles view', () => {
  it('switches to tiles from the keyboard, keeps it in the URL with the filters, and stays virtualised', async () => {
    const user = userEvent.setup();
    const location = renderAt(many(10_000), '/applications?project=team-a');
    const tiles = screen.getByRole('button', { name: 'Tiles' });
    expect(tiles.getAttribute('aria-pressed')).toBe('false');
    tiles.focus();
    await user.keyboard('{Enter}');
    expect(location.history?.at(-1)).toBe('/applications?view=tiles&project=team-a');
    expect(screen.getByRole('button', { name: 'Tiles' }).getAttribute('aria-pressed')).toBe('true');
    const region = screen.getByRole('region', { name: 'applications' });
    expect(region.classList.contains('tiles')).toBe(true);
    const shown = within(region).getAllByRole('listitem');
    expect(shown.length).toBeGreaterThan(3);
    expect(shown.length).toBeLessThan(100);
    expect(within(shown[0]!).getByRole('link', { name: 'app-00001' })).toBeTruthy();
    expect(within(shown[0]!).getByText('team-a')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'List' }));
    expect(location.history?.at(-1)).toBe('/applications?project=team-a');
  });

  it('opens on tiles from a deep link, and fits as many columns as the width holds', () => {
    renderAt(many(10), '/applications?view=tiles');
    expect(screen.getByRole('region', { name: 'applications' }).classList.contains('tiles')).toBe(true);
    expect(columnsFor(1000)).toBe(3);
    expect(columnsFor(100)).toBe(1);
  });
});
