import { describe, expect, it } from 'vitest';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ResourcePanel } from './ResourcePanel';
import type { PanelTarget } from './graph-layout';
import { renderPage } from '../test-support/render';
import { answer, calls } from '../test-support/http';

const deployment: PanelTarget = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  namespace: 'team-a-prod',
  name: 'web',
  status: 'OutOfSync',
};

const git = {
  kind: 'Deployment',
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'web:2' }] } } },
};
const live = {
  kind: 'Deployment',
  metadata: { uid: 'u-1' },
  spec: { replicas: 1, template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
  status: { readyReplicas: 1 },
};
// Live with git's fields applied: what the server filled in (uid, status) is on both sides.
const predicted = { ...live, spec: git.spec };

function renderPanel(item: Record<string, string>) {
  answer(({ method, path }) => {
    if (method === 'GET' && path === '/api/v1/applications/guestbook/managed-resources')
      return { body: { items: [item] } };
    return undefined;
  });
  renderPage(
    <ResourcePanel appName="guestbook" appNamespace="capstan" resource={deployment} onClose={() => {}} />,
  );
}

describe('resource panel', () => {
  it('shows the field-level diff of the predicted live object against the live one', async () => {
    renderPanel({
      targetState: JSON.stringify(git),
      liveState: JSON.stringify(live),
      normalizedLiveState: JSON.stringify(live),
      predictedLiveState: JSON.stringify(predicted),
    });
    const dialog = await screen.findByRole('dialog', { name: 'Deployment web' });
    const table = await within(dialog).findByRole('table');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual([
      'spec.replicas21differs',
      'spec.template.spec.containers[name=web].imageweb:2web:1differs',
    ]);
    const asked = calls.find((c) => c.path.endsWith('/managed-resources'))!;
    expect(new URLSearchParams(asked.search).get('kind')).toBe('Deployment');
    expect(new URLSearchParams(asked.search).get('group')).toBe('apps');
  });

  it('without a predicted object compares git with live, and shows both manifests', async () => {
    const user = userEvent.setup();
    renderPanel({ targetState: JSON.stringify(git), liveState: '' });
    const dialog = await screen.findByRole('dialog', { name: 'Deployment web' });
    const table = await within(dialog).findByRole('table');
    expect(within(table).getAllByRole('row')[1]!.textContent).toMatch(/^\(whole object\).*only in git$/);
    await user.click(within(dialog).getByRole('tab', { name: 'Live' }));
    expect(within(dialog).getByText('(not in the cluster)')).toBeTruthy();
    await user.click(within(dialog).getByRole('tab', { name: 'Desired' }));
    expect(within(dialog).getByText(/"replicas": 2/)).toBeTruthy();
  });

  it("says when the live object has all of git's fields", async () => {
    renderPanel({
      targetState: JSON.stringify(git),
      liveState: JSON.stringify(predicted),
      normalizedLiveState: JSON.stringify(predicted),
      predictedLiveState: JSON.stringify(predicted),
    });
    expect(await screen.findByText(/No difference/)).toBeTruthy();
  });
});
