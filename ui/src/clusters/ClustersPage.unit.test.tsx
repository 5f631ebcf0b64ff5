import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ClustersPage } from './ClustersPage';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

const ui = {
  server: 'https://ui:6443',
  name: 'ui',
  namespaces: [],
  credentialType: 'bearer',
  metadata: { resourceVersion: '2' },
};

describe('clusters page', () => {
  it('adds a cluster: the violations show by their fields, the secret is a password input', async () => {
    const user = userEvent.setup();
    answer(({ method, path, body }) => {
      if (method === 'GET' && path === '/api/v1/clusters') return { body: { items: [ui] } };
      if (method === 'POST' && path === '/api/v1/clusters') {
        if ((body as { server: string }).server.startsWith('https://'))
          return { body: { ...ui, server: (body as { server: string }).server } };
        return invalidAnswer(
          ['server', 'must be an absolute URL (https://host:port)'],
          ['config', 'give one credential'],
        );
      }
      return undefined;
    });
    renderPage(<ClustersPage />, '/clusters');
    expect(await screen.findByRole('cell', { name: 'https://ui:6443' })).toBeTruthy();
    expect(screen.getByRole('cell', { name: 'bearer' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Add cluster' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a cluster' });
    const server = within(dialog).getByLabelText('Server URL');
    await user.type(server, 'ui:6443');
    const token = within(dialog).getByLabelText('Bearer token');
    expect(token.getAttribute('type')).toBe('password');
    await user.type(token, 'secret-token');
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(server.getAttribute('aria-invalid')).toBe('true'));
    expect(within(dialog).getByText('must be an absolute URL (https://host:port)')).toBeTruthy();
    expect(
      within(within(dialog).getByLabelText('Credential').parentElement!).getByText('give one credential'),
    ).toBeTruthy();
    await user.clear(server);
    await user.type(server, 'https://new:6443');
    await user.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.filter((c) => c.method === 'POST').at(-1)!.body).toMatchObject({
      server: 'https://new:6443',
      config: { bearerToken: 'secret-token' },
    });
  });

  it('edits keeping the stored credential, and removes after a confirmation', async () => {
    const user = userEvent.setup();
    answer(({ method, path }) => {
      if (method === 'GET' && path === '/api/v1/clusters') return { body: { items: [ui] } };
      if (method === 'PUT' || method === 'DELETE') return { body: {} };
      return undefined;
    });
    renderPage(<ClustersPage />, '/clusters');
    await user.click(await screen.findByRole('button', { name: 'Edit ui' }));
    const dialog = screen.getByRole('dialog', { name: 'Edit ui' });
    expect((within(dialog).getByLabelText('Credential') as HTMLSelectElement).value).toBe('keep');
    await user.type(within(dialog).getByLabelText('Namespaces'), 'team-a');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const put = calls.find((c) => c.method === 'PUT')!;
    expect(put.path).toBe(`/api/v1/clusters/${encodeURIComponent('https://ui:6443')}`);
    expect(put.body).toEqual({
      server: 'https://ui:6443',
      name: 'ui',
      namespaces: ['team-a'],
      project: '',
      resourceVersion: 2,
    });

    await user.click(screen.getByRole('button', { name: 'Remove ui' }));
    await user.click(
      within(screen.getByRole('dialog', { name: 'Remove the cluster ui' })).getByRole('button', {
        name: 'Remove',
      }),
    );
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE')).toBe(true));
  });
});
