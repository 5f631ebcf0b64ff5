// Create a project, or edit its main spec fields, in a dialog; the api validates (the policy
// library's checks and the parent-chain bound) and its field violations show next to each field.
import { useState, type FormEvent } from 'react';
import { Dialog } from 'radix-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { Field, FormErrors } from '../forms/Field';
import { placeViolations } from '../forms/violations';
import type { Project } from './chain';
import { PROJECT_FIELDS, draftOf, projectOf, type ProjectDraft } from './project-form';
import { CloseButton } from '../forms/DialogParts';

type Stored = Project;

const LIST_HINT = 'One a line.';

export function ProjectForm(props: { stored?: Stored; onSaved: (p: Project) => void }) {
  const qc = useQueryClient();
  const editing = props.stored !== undefined;
  const [draft, setDraft] = useState<ProjectDraft>(() => draftOf(props.stored));
  const save = useMutation({
    mutationFn: async () => {
      const project = projectOf(draft, props.stored);
      const name = String(project.metadata.name);
      return unwrap(
        editing
          ? await api.PUT('/api/v1/projects/{name}', { params: { path: { name } }, body: { project } })
          : await api.POST('/api/v1/projects', { body: { project } }),
      ) as Project;
    },
    onSuccess: (p) => {
      void qc.invalidateQueries({ queryKey: ['projects'] });
      void qc.invalidateQueries({ queryKey: ['project-chain'] });
      props.onSaved(p);
    },
  });
  const placed = placeViolations(save.error, Object.values(PROJECT_FIELDS), 'project.');
  const errorsOf = (k: keyof ProjectDraft) => placed.byField[PROJECT_FIELDS[k]];
  const text = (k: keyof ProjectDraft) => ({
    value: draft[k],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label={editing ? 'edit project' : 'new project'} noValidate>
      <FormErrors placed={placed} />
      {!editing && (
        <Field id="project-name" label="Name" errors={errorsOf('name')}>
          {(c) => <input {...c} autoComplete="off" {...text('name')} />}
        </Field>
      )}
      <Field id="project-description" label="Description" errors={errorsOf('description')}>
        {(c) => <input {...c} {...text('description')} />}
      </Field>
      <Field
        id="project-parent"
        label="Parent project"
        hint="Bounds this project: it can never be wider than its parent chain."
        errors={errorsOf('parentProject')}
      >
        {(c) => <input {...c} {...text('parentProject')} />}
      </Field>
      <Field
        id="project-sources"
        label="Source repositories"
        hint={`${LIST_HINT} Globs.`}
        errors={errorsOf('sourceRepos')}
      >
        {(c) => <textarea {...c} className="code" rows={3} {...text('sourceRepos')} />}
      </Field>
      <Field
        id="project-destinations"
        label="Destinations"
        hint={`${LIST_HINT} server-or-cluster-name,namespace (globs).`}
        errors={errorsOf('destinations')}
      >
        {(c) => <textarea {...c} className="code" rows={3} {...text('destinations')} />}
      </Field>
      <Field
        id="project-sas"
        label="Destination ServiceAccounts"
        hint={`${LIST_HINT} server,namespace,serviceAccount; the first match wins.`}
        errors={errorsOf('serviceAccounts')}
      >
        {(c) => <textarea {...c} className="code" rows={3} {...text('serviceAccounts')} />}
      </Field>
      <Field
        id="project-cluster-resources"
        label="Cluster resources allowed"
        hint={`${LIST_HINT} group,kind (an empty group is the core group).`}
        errors={errorsOf('clusterResources')}
      >
        {(c) => <textarea {...c} className="code" rows={2} {...text('clusterResources')} />}
      </Field>
      <div className="actions">
        <CloseButton />
        <button type="submit" className="button primary" disabled={save.isPending}>
          {editing ? 'Save' : 'Create'}
        </button>
      </div>
    </form>
  );
}

/** The form in a dialog, opened by a button. */
export function ProjectFormDialog(props: { stored?: Stored; onSaved?: (p: Project) => void }) {
  const [open, setOpen] = useState(false);
  const title = props.stored ? `Edit ${props.stored.metadata.name}` : 'New project';
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>
        <button type="button" className={props.stored ? 'button' : 'button primary'}>
          {props.stored ? 'Edit' : 'New project'}
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog sheet">
          <Dialog.Title>{title}</Dialog.Title>
          <Dialog.Description>
            The api checks every field, and the bounds of the parent chain.
          </Dialog.Description>
          <ProjectForm
            stored={props.stored}
            onSaved={(p) => {
              setOpen(false);
              props.onSaved?.(p);
            }}
          />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
