// Add (or replace, with upsert) a repository credential, optionally scoped to a project. The secret
// fields are write-only: password inputs, never filled from the api (which returns no secret). The
// repositories page (ui/src/repositories/, the live-resources work) embeds this form.
import { useState, type FormEvent } from 'react';
import { Dialog } from 'radix-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { Field, FormErrors } from '../forms/Field';
import { placeViolations } from '../forms/violations';

export interface RepositoryDraft {
  repo: string;
  project: string;
  type: 'git' | 'helm';
  name: string;
  username: string;
  password: string;
  sshPrivateKey: string;
  insecure: boolean;
  upsert: boolean;
}

const FIELDS = ['repo', 'project', 'type', 'name', 'username', 'password', 'sshPrivateKey', 'insecure'];

export const emptyRepository = (project = ''): RepositoryDraft => ({
  repo: '',
  project,
  type: 'git',
  name: '',
  username: '',
  password: '',
  sshPrivateKey: '',
  insecure: false,
  upsert: false,
});

export function RepositoryForm(props: { project?: string; onSaved?: () => void; onCancel?: () => void }) {
  const qc = useQueryClient();
  const [d, setD] = useState<RepositoryDraft>(() => emptyRepository(props.project));
  const save = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/api/v1/repositories', { body: { ...d, repo: d.repo.trim() } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['repositories'] });
      setD(emptyRepository(props.project)); // the secrets leave memory once saved
      props.onSaved?.();
    },
  });
  const placed = placeViolations(save.error, FIELDS);
  const text = (k: 'repo' | 'project' | 'name' | 'username' | 'password' | 'sshPrivateKey') => ({
    value: d[k],
    onChange: (e: { target: { value: string } }) => setD({ ...d, [k]: e.target.value }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="add repository credential" noValidate className="form">
      <FormErrors placed={placed} />
      <Field id="repo-url" label="Repository URL" errors={placed.byField.repo}>
        {(c) => <input {...c} placeholder="https://git.example.com/team/apps.git" {...text('repo')} />}
      </Field>
      <Field
        id="repo-project"
        label="Project"
        hint="Empty: a credential for every project."
        errors={placed.byField.project}
      >
        {(c) => <input {...c} {...text('project')} />}
      </Field>
      <Field id="repo-type" label="Type" errors={placed.byField.type}>
        {(c) => (
          <select
            {...c}
            value={d.type}
            onChange={(e) => setD({ ...d, type: e.target.value as 'git' | 'helm' })}
          >
            <option value="git">git</option>
            <option value="helm">helm</option>
          </select>
        )}
      </Field>
      <Field
        id="repo-name"
        label="Name"
        hint="Helm repositories are referred to by it."
        errors={placed.byField.name}
      >
        {(c) => <input {...c} {...text('name')} />}
      </Field>
      <Field id="repo-username" label="Username" errors={placed.byField.username}>
        {(c) => <input {...c} autoComplete="off" {...text('username')} />}
      </Field>
      <Field id="repo-password" label="Password or token" errors={placed.byField.password}>
        {(c) => <input {...c} type="password" autoComplete="off" {...text('password')} />}
      </Field>
      <Field id="repo-ssh" label="SSH private key" errors={placed.byField.sshPrivateKey}>
        {(c) => <textarea {...c} className="code" rows={3} autoComplete="off" {...text('sshPrivateKey')} />}
      </Field>
      <label className="check">
        <input
          type="checkbox"
          checked={d.insecure}
          onChange={(e) => setD({ ...d, insecure: e.target.checked })}
        />{' '}
        Skip TLS verification (insecure)
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={d.upsert}
          onChange={(e) => setD({ ...d, upsert: e.target.checked })}
        />{' '}
        Replace an existing credential for this URL and project
      </label>
      <div className="actions">
        {props.onCancel && (
          <button type="button" className="button ghost" onClick={props.onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="button primary" disabled={save.isPending}>
          Save credential
        </button>
      </div>
    </form>
  );
}

/** The form in a dialog, opened by a button (for the repositories page to place). */
export function RepositoryFormDialog({ project }: { project?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>
        <button type="button" className="button primary">
          Add repository credential
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog sheet">
          <Dialog.Title>Add a repository credential</Dialog.Title>
          <Dialog.Description>Secrets are stored encrypted and never shown again.</Dialog.Description>
          <RepositoryForm project={project} onSaved={() => setOpen(false)} onCancel={() => setOpen(false)} />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
