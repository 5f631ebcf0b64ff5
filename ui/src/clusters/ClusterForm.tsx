// Add or edit a cluster. The credential fields are write-only (password inputs, never filled from
// the api, which returns only the credential's kind); the api's violations show by their field.
import { useState, type FormEvent } from 'react';
import { Dialog } from 'radix-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { Field, FormErrors } from '../forms/Field';
import { placeViolations } from '../forms/violations';
import {
  CLUSTER_FIELDS,
  clusterDraftOf,
  registrationOf,
  type Cluster,
  type ClusterDraft,
  type Credential,
} from './cluster-form';
import { CloseButton } from '../forms/DialogParts';

const CREDENTIALS: { value: Credential; label: string }[] = [
  { value: 'keep', label: 'Keep the stored credential' },
  { value: 'bearer', label: 'Bearer token' },
  { value: 'basic', label: 'Username and password' },
  { value: 'tls', label: 'Client certificate' },
  { value: 'none', label: 'None' },
];

export function ClusterForm(props: { stored?: Cluster; onSaved: () => void }) {
  const qc = useQueryClient();
  const editing = props.stored !== undefined;
  const [d, setD] = useState<ClusterDraft>(() => clusterDraftOf(props.stored));
  const save = useMutation({
    mutationFn: async () => {
      const body = registrationOf(d, props.stored);
      return unwrap(
        editing
          ? await api.PUT('/api/v1/clusters/{server}', {
              params: { path: { server: props.stored!.server } },
              body,
            })
          : await api.POST('/api/v1/clusters', { body }),
      );
    },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['clusters'] });
      props.onSaved();
    },
  });
  const placed = placeViolations(save.error, Object.values(CLUSTER_FIELDS));
  const err = (k: keyof typeof CLUSTER_FIELDS) => placed.byField[CLUSTER_FIELDS[k]];
  const { text } = inputs({ d, setD });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label={editing ? 'edit cluster' : 'add cluster'} noValidate>
      <FormErrors placed={placed} />
      {!editing && (
        <Field id="cluster-server" label="Server URL" errors={err('server')}>
          {(c) => <input {...c} placeholder="https://host:6443" {...text('server')} />}
        </Field>
      )}
      <Field id="cluster-name" label="Name" hint="Defaults to the server's host." errors={err('name')}>
        {(c) => <input {...c} {...text('name')} />}
      </Field>
      <Field
        id="cluster-namespaces"
        label="Namespaces"
        hint="One a line; empty: every namespace."
        errors={err('namespaces')}
      >
        {(c) => <textarea {...c} className="code" rows={2} {...text('namespaces')} />}
      </Field>
      <Field
        id="cluster-project"
        label="Project"
        hint="Scopes the cluster to one project."
        errors={err('project')}
      >
        {(c) => <input {...c} {...text('project')} />}
      </Field>
      <CredentialFields d={d} setD={setD} err={err} editing={editing} />
      <div className="actions">
        <CloseButton />
        <button type="submit" className="button primary" disabled={save.isPending}>
          {editing ? 'Save' : 'Add'}
        </button>
      </div>
    </form>
  );
}

type Draft = { d: ClusterDraft; setD: (d: ClusterDraft) => void };

function inputs({ d, setD }: Draft) {
  const text = (k: keyof ClusterDraft) => ({
    value: d[k] as string,
    onChange: (e: { target: { value: string } }) => setD({ ...d, [k]: e.target.value }),
  });
  return { text, secret: (k: keyof ClusterDraft) => ({ ...text(k), type: 'password', autoComplete: 'off' }) };
}

/** The credential: its kind, then only that kind's write-only fields. */
function CredentialFields({
  d,
  setD,
  err,
  editing,
}: Draft & { err: (k: keyof typeof CLUSTER_FIELDS) => string[] | undefined; editing: boolean }) {
  const { text, secret } = inputs({ d, setD });
  return (
    <>
      <Field id="cluster-credential" label="Credential" errors={err('credential')}>
        {(c) => (
          <select
            {...c}
            value={d.credential}
            onChange={(e) => setD({ ...d, credential: e.target.value as Credential })}
          >
            {CREDENTIALS.filter((o) => editing || o.value !== 'keep').map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {d.credential === 'bearer' && (
        <Field id="cluster-token" label="Bearer token" errors={err('bearerToken')}>
          {(c) => <input {...c} {...secret('bearerToken')} />}
        </Field>
      )}
      {d.credential === 'basic' && (
        <>
          <Field id="cluster-username" label="Username" errors={err('username')}>
            {(c) => <input {...c} autoComplete="off" {...text('username')} />}
          </Field>
          <Field id="cluster-password" label="Password" errors={err('password')}>
            {(c) => <input {...c} {...secret('password')} />}
          </Field>
        </>
      )}
      {d.credential === 'tls' && (
        <>
          <Field id="cluster-cert" label="Client certificate (PEM)" errors={err('certData')}>
            {(c) => <textarea {...c} className="code" rows={3} {...text('certData')} />}
          </Field>
          <Field id="cluster-key" label="Client key (PEM)" errors={err('keyData')}>
            {(c) => (
              <textarea {...c} className="code secret" rows={3} autoComplete="off" {...text('keyData')} />
            )}
          </Field>
        </>
      )}
      {d.credential !== 'keep' && (
        <>
          <Field id="cluster-ca" label="Certificate authority (PEM)" errors={err('caData')}>
            {(c) => <textarea {...c} className="code" rows={3} {...text('caData')} />}
          </Field>
          <Field id="cluster-server-name" label="TLS server name" errors={err('serverName')}>
            {(c) => <input {...c} {...text('serverName')} />}
          </Field>
          <label className="check">
            <input
              type="checkbox"
              checked={d.insecure}
              onChange={(e) => setD({ ...d, insecure: e.target.checked })}
            />{' '}
            Skip TLS verification (insecure)
          </label>
        </>
      )}
    </>
  );
}

export function ClusterFormDialog({ stored }: { stored?: Cluster }) {
  const [open, setOpen] = useState(false);
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>
        <button
          type="button"
          className={stored ? 'button' : 'button primary'}
          aria-label={stored ? `Edit ${stored.name || stored.server}` : undefined}
        >
          {stored ? 'Edit' : 'Add cluster'}
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog sheet">
          <Dialog.Title>{stored ? `Edit ${stored.name || stored.server}` : 'Add a cluster'}</Dialog.Title>
          <Dialog.Description>The credential is stored encrypted and never shown again.</Dialog.Description>
          <ClusterForm stored={stored} onSaved={() => setOpen(false)} />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
