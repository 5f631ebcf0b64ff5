// Local accounts and their API tokens: list, create and delete an account, set its password (the
// dialogs in AccountDialogs.tsx), create a token (shown once, then gone: it lives only in this
// dialog's state, never in the query cache or storage), revoke one.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import { ConfirmDelete } from '../forms/ConfirmDelete';
import { Field, FormErrors } from '../forms/Field';
import { placeViolations } from '../forms/violations';
import { CloseButton, ModalDialog } from '../forms/DialogParts';
import { useUserInfo } from '../auth/session';
import { ACCOUNTS, DeleteAccount, NewAccountDialog, SetPasswordDialog } from './AccountDialogs';

interface Token {
  id: string;
  issuedAt?: string;
  expiresAt?: string;
}

export interface Account {
  name: string;
  enabled?: boolean;
  capabilities?: string[];
  groups?: string[];
  tokens?: Token[];
}

export function AccountsPage() {
  const list = useQuery({
    queryKey: ACCOUNTS,
    queryFn: async () => (unwrap(await api.GET('/api/v1/account')) as { items?: Account[] }).items ?? [],
  });
  return (
    <section className="page">
      <div className="page-head">
        <h1>Accounts and tokens</h1>
        <span className="spacer" />
        <NewAccountDialog />
      </div>
      <QueryState isPending={list.isPending} error={list.error} what="list accounts">
        {() => (
          <ul className="cards">
            {list.data!.map((a) => (
              <AccountCard key={a.name} account={a} />
            ))}
          </ul>
        )}
      </QueryState>
    </section>
  );
}

const when = (iso?: string) => (iso ? new Date(iso).toLocaleString() : 'never');

function AccountCard({ account: a }: { account: Account }) {
  const apiKey = (a.capabilities ?? []).includes('apiKey');
  const me = useUserInfo().data?.username;
  return (
    <li className="card">
      <div className="page-head">
        <h2 id={`account-${a.name}`}>{a.name}</h2>
        <span className="muted">
          {a.enabled === false ? 'disabled' : 'enabled'} ·{' '}
          {(a.capabilities ?? []).join(', ') || 'no capability'}
        </span>
        <span className="spacer" />
        {apiKey && <CreateTokenDialog account={a.name} />}
        <SetPasswordDialog account={a.name} self={a.name === me} />
        {a.name !== me && <DeleteAccount account={a.name} />}
      </div>
      <p className="muted">Groups: {(a.groups ?? []).join(', ') || 'none'}</p>
      {(a.tokens ?? []).length === 0 ? (
        <p className="muted">
          {apiKey ? 'No API token.' : 'This account cannot have API tokens (no apiKey capability).'}
        </p>
      ) : (
        <table className="table">
          <caption className="visually-hidden">API tokens of {a.name}</caption>
          <thead>
            <tr>
              <th scope="col">Token ID</th>
              <th scope="col">Issued</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {a.tokens!.map((t) => (
              <TokenRow key={t.id} account={a.name} token={t} />
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

function TokenRow({ account, token: t }: { account: string; token: Token }) {
  const qc = useQueryClient();
  const revoke = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.DELETE('/api/v1/account/{name}/token/{id}', {
          params: { path: { name: account, id: t.id } },
        }),
      ),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ACCOUNTS }),
  });
  return (
    <tr>
      <td className="mono">{t.id}</td>
      <td>{when(t.issuedAt)}</td>
      <td>{when(t.expiresAt)}</td>
      <td>
        <ConfirmDelete
          title={`Revoke the token ${t.id}`}
          description={`Calls made with it are refused from now on.`}
          trigger="Revoke"
          triggerLabel={`Revoke token ${t.id}`}
          pending={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutateAsync()}
        />
      </td>
    </tr>
  );
}

const TOKEN_FIELDS = ['id', 'expiresIn'];

export function CreateTokenDialog({ account }: { account: string }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [id, setId] = useState('');
  const [days, setDays] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/account/{name}/token', {
          params: { path: { name: account } },
          body: { id, expiresIn: days.trim() === '' ? 0 : Math.round(Number(days) * 86_400) },
        }),
      ) as { token?: string; id?: string },
    onSuccess: () => void qc.invalidateQueries({ queryKey: ACCOUNTS }),
  });
  const close = (o: boolean) => {
    setOpen(o);
    if (!o) {
      create.reset(); // the token leaves memory with the dialog
      setId('');
      setDays('');
    }
  };
  const placed = placeViolations(create.error, TOKEN_FIELDS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <ModalDialog
      open={open}
      onOpenChange={close}
      trigger={
        <button type="button" className="button" aria-label={`New token for ${account}`}>
          New token
        </button>
      }
      title={<>New API token for {account}</>}
      description="The token is shown once, here; copy it before closing."
    >
      {create.data?.token ? (
        <div className="token-once">
          <label htmlFor="token-value">Token {create.data.id}</label>
          <textarea id="token-value" className="code" readOnly rows={4} value={create.data.token} />
          <p role="status">Created. It will not be shown again.</p>
          <div className="actions">
            <CloseButton label="Done" primary />
          </div>
        </div>
      ) : (
        <form onSubmit={submit} noValidate aria-label="new token">
          <FormErrors placed={placed} />
          <Field id="token-id" label="ID" hint="Optional; generated when empty." errors={placed.byField.id}>
            {(c) => <input {...c} value={id} onChange={(e) => setId(e.target.value)} />}
          </Field>
          <Field
            id="token-expires"
            label="Expires in (days)"
            hint="Empty: never."
            errors={placed.byField.expiresIn}
          >
            {(c) => (
              <input {...c} inputMode="decimal" value={days} onChange={(e) => setDays(e.target.value)} />
            )}
          </Field>
          <div className="actions">
            <CloseButton />
            <button type="submit" className="button primary" disabled={create.isPending}>
              Create
            </button>
          </div>
        </form>
      )}
    </ModalDialog>
  );
}
