import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  ApplicationSetPage,
  ApplicationSetsPage,
  NewApplicationSetPage,
  editable,
  parseSet,
} from './ApplicationSetsPage';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

const stored = {
  metadata: { name: 'envs', namespace: 'argocd', uid: 'x' },
  spec: { generators: [{ list: { elements: [{ env: 'dev' }] } }] },
  status: {},
};

describe('ApplicationSet preview input', () => {
  it('keeps the name, namespace and spec of the stored set, not its status', () => {
    expect(editable(stored)).toEqual({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'envs', namespace: 'argocd' },
      spec: stored.spec,
    });
    expect(() => parseSet('{')).toThrow(/not valid JSON/);
    expect(() => parseSet('[]')).toThrow('the set must be a JSON object');
  });
});

describe('ApplicationSet pages', () => {
  it('lists the sets with a link to each and to a new one', async () => {
    answer(({ path }) => (path === '/api/v1/applicationsets' ? { body: { items: [stored] } } : undefined));
    renderPage(<ApplicationSetsPage />, '/applicationsets');
    expect((await screen.findByRole('link', { name: 'envs' })).getAttribute('href')).toBe(
      '/applicationsets/argocd/envs',
    );
    expect(screen.getByRole('link', { name: 'New ApplicationSet' }).getAttribute('href')).toBe(
      '/applicationsets/new',
    );
  });

  it('previews the verdicts, saves with upsert, and shows a refusal by its path', async () => {
    const user = userEvent.setup();
    let refuse = true;
    answer(({ method, path }) => {
      if (method === 'GET' && path === '/api/v1/applicationsets/envs') return { body: stored };
      if (path === '/api/v1/applicationsets/generate')
        return {
          body: {
            verdicts: [
              { name: 'app-dev', project: 'team-a', action: 'create', allowed: true },
              {
                name: 'app-prod',
                project: 'team-a',
                action: 'create',
                allowed: false,
                reason: 'permission denied',
              },
            ],
          },
        };
      if (method === 'POST' && path === '/api/v1/applicationsets') {
        if (refuse) return invalidAnswer(['spec.template.spec.project', 'required']);
        return { body: stored };
      }
      return undefined;
    });
    renderPage(<ApplicationSetPage namespace="argocd" name="envs" />, '/applicationsets/argocd/envs');
    await screen.findByLabelText('The set (JSON)');
    await user.click(screen.getByRole('button', { name: 'Preview generate' }));
    expect((await screen.findByRole('status')).textContent).toContain(
      '2 Applications; 1 refused: saving would write none',
    );
    expect(screen.getByRole('cell', { name: '✖ permission denied' })).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Save' }));
    const editor = screen.getByLabelText('The set (JSON)');
    await waitFor(() => expect(editor.getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('spec.template.spec.project: required')).toBeTruthy();
    const save = calls.find((c) => c.method === 'POST' && c.path === '/api/v1/applicationsets')!;
    expect(save.search).toBe('?upsert=true');
    expect(save.body).toEqual(editable(stored));

    refuse = false;
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('status')).textContent).toBe('Saved.');
  });

  it('says where the JSON is broken, and deletes the set after a confirmation', async () => {
    const user = userEvent.setup();
    answer(({ method, path }) => {
      if (method === 'GET' && path === '/api/v1/applicationsets/envs') return { body: stored };
      if (method === 'DELETE') return { body: { applications: [] } };
      return undefined;
    });
    const { location } = renderPage(
      <ApplicationSetPage namespace="argocd" name="envs" />,
      '/applicationsets/argocd/envs',
    );
    fireEvent.change(await screen.findByLabelText('The set (JSON)'), { target: { value: '{ nope' } });
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/the set is not valid JSON/);
    await user.click(screen.getByRole('button', { name: 'Delete' }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/applicationsets'));
    expect(calls.find((c) => c.method === 'DELETE')!.search).toBe('?appsetNamespace=argocd');
  });

  it('creates a new set from the template and opens it', async () => {
    const user = userEvent.setup();
    answer(({ method }) =>
      method === 'POST' ? { body: { metadata: { name: 'fresh', namespace: 'argocd' } } } : undefined,
    );
    const { location } = renderPage(<NewApplicationSetPage />, '/applicationsets/new');
    await user.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/applicationsets/argocd/fresh'));
    expect(calls[0]!.search).toBe('?upsert=false');
  });
});
