import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { RepositoryFormDialog } from './RepositoryForm';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

describe('repository credential form', () => {
  it('shows the violations by field, keeps secrets in password inputs, and empties them once saved', async () => {
    const user = userEvent.setup();
    answer(({ body }) =>
      (body as { repo: string }).repo.startsWith('https://')
        ? { body: { repo: (body as { repo: string }).repo } }
        : invalidAnswer(['repo', 'must be a URL']),
    );
    renderPage(<RepositoryFormDialog project="team-a" />);
    await user.click(screen.getByRole('button', { name: 'Add repository credential' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a repository credential' });
    expect((within(dialog).getByLabelText('Project') as HTMLInputElement).value).toBe('team-a');
    const password = within(dialog).getByLabelText('Password or token');
    expect(password.getAttribute('type')).toBe('password');
    await user.type(within(dialog).getByLabelText('Repository URL'), 'git.example.com/apps');
    await user.type(within(dialog).getByLabelText('Username'), 'git');
    await user.type(password, 's3cret');
    await user.click(within(dialog).getByRole('button', { name: 'Save credential' }));
    expect(await within(dialog).findByText('must be a URL')).toBeTruthy();
    expect(within(dialog).getByLabelText('Repository URL').getAttribute('aria-invalid')).toBe('true');
    await user.clear(within(dialog).getByLabelText('Repository URL'));
    await user.type(within(dialog).getByLabelText('Repository URL'), 'https://git.example.com/apps.git');
    await user.click(within(dialog).getByRole('button', { name: 'Save credential' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.at(-1)!.body).toMatchObject({
      repo: 'https://git.example.com/apps.git',
      project: 'team-a',
      type: 'git',
      username: 'git',
      password: 's3cret',
      upsert: false,
    });
  });
});
