// Creating, re-keying and deleting local accounts (the api's AccountService.Create, UpdatePassword
// and Delete; RBAC `accounts, create|update|delete`). Passwords live only in the dialog's state and
// leave memory with it; the api's field messages are shown next to the field they name.
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ConfirmDelete } from '../forms/ConfirmDelete';
import { Field, FormErrors } from '../forms/Field';
import { placeViolations } from '../forms/violations';
import { CloseButton, ModalDialog } from '../forms/DialogParts';

export const ACCOUNTS = ['accounts'] as const;
const CAPABILITIES = ['login', 'apiKey'] as const;
const ACCOUNT_FIELDS = ['name', 'password', 'capabilities', 'groups'];
const PASSWORD_FIELDS = ['newPassword', 'currentPassword'];

export function NewAccountDialog() {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [capabilities, setCapabilities] = useState<string[]>(['login']);
  const [groups, setGroups] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/account', {
          body: {
            name: name.trim(),
            password,
            capabilities,
            groups: groups
              .split(',')
              .map((g) => g.trim())
              .filter(Boolean),
          },
        }),
      ),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ACCOUNTS });
      close(false);
    },
  });
  function close(o: boolean) {
    setOpen(o);
    if (!o) {
      create.reset();
      setName('');
      setPassword('');
      setCapabilities(['login']);
      setGroups('');
    }
  }
  const placed = placeViolations(create.error, ACCOUNT_FIELDS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const toggle = (c: string, on: boolean) =>
    setCapabilities((cs) => (on ? [...cs.filter((x) => x !== c), c] : cs.filter((x) => x !== c)));
  return (
    <ModalDialog
      open={open}
      onOpenChange={close}
      trigger={
        <button type="button" className="button primary">
          New account
        </button>
      }
      title="New local account"
      description="Argo CD's accounts.<name>, kept by the api."
    >
      <form onSubmit={submit} noValidate aria-label="new account">
        <FormErrors placed={placed} />
        <Field id="account-name" label="Name" errors={placed.byField.name}>
          {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field
          id="account-password"
          label="Password"
          hint="Empty: the account cannot log in with a password."
          errors={placed.byField.password}
        >
          {(c) => (
            <input
              {...c}
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <fieldset aria-describedby={placed.byField.capabilities ? 'account-capabilities-error' : undefined}>
          <legend>Capabilities</legend>
          {CAPABILITIES.map((c) => (
            <label key={c} className="check">
              <input
                type="checkbox"
                checked={capabilities.includes(c)}
                onChange={(e) => toggle(c, e.target.checked)}
              />{' '}
              {c}
            </label>
          ))}
          {placed.byField.capabilities && (
            <p id="account-capabilities-error" className="field-error">
              {placed.byField.capabilities.join('; ')}
            </p>
          )}
        </fieldset>
        <Field
          id="account-groups"
          label="Groups"
          hint="Comma-separated; RBAC subjects of `g, <group>, role:…`."
          errors={placed.byField.groups}
        >
          {(c) => <input {...c} value={groups} onChange={(e) => setGroups(e.target.value)} />}
        </Field>
        <div className="actions">
          <CloseButton />
          <button type="submit" className="button primary" disabled={create.isPending}>
            Create
          </button>
        </div>
      </form>
    </ModalDialog>
  );
}

/** A new password for `account`; changing one's own (`self`) needs the current password. */
export function SetPasswordDialog({ account, self }: { account: string; self: boolean }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const update = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/api/v1/account/password', {
          body: { name: account, currentPassword: current, newPassword: next },
        }),
      ),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ACCOUNTS }),
  });
  const close = (o: boolean) => {
    setOpen(o);
    if (!o) {
      update.reset();
      setCurrent('');
      setNext('');
    }
  };
  const placed = placeViolations(update.error, PASSWORD_FIELDS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    update.mutate();
  };
  return (
    <ModalDialog
      open={open}
      onOpenChange={close}
      trigger={
        <button type="button" className="button" aria-label={`Set the password of ${account}`}>
          Password
        </button>
      }
      title={<>Password of {account}</>}
      description="Its sessions end when the password changes."
    >
      {update.isSuccess ? (
        <div>
          <p role="status">Password changed.</p>
          <div className="actions">
            <CloseButton label="Done" primary />
          </div>
        </div>
      ) : (
        <form onSubmit={submit} noValidate aria-label="set password">
          <FormErrors placed={placed} />
          {self && (
            <Field id="password-current" label="Current password" errors={placed.byField.currentPassword}>
              {(c) => (
                <input
                  {...c}
                  type="password"
                  autoComplete="current-password"
                  value={current}
                  onChange={(e) => setCurrent(e.target.value)}
                />
              )}
            </Field>
          )}
          <Field id="password-new" label="New password" errors={placed.byField.newPassword}>
            {(c) => (
              <input
                {...c}
                type="password"
                autoComplete="new-password"
                value={next}
                onChange={(e) => setNext(e.target.value)}
              />
            )}
          </Field>
          <div className="actions">
            <CloseButton />
            <button type="submit" className="button primary" disabled={update.isPending}>
              Change
            </button>
          </div>
        </form>
      )}
    </ModalDialog>
  );
}

export function DeleteAccount({ account }: { account: string }) {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/api/v1/account/{name}', { params: { path: { name: account } } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ACCOUNTS }),
  });
  return (
    <ConfirmDelete
      title={`Delete the account ${account}`}
      description="Its sessions and API tokens are refused from now on."
      triggerLabel={`Delete account ${account}`}
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => remove.mutateAsync()}
    />
  );
}
