// ApplicationSets the caller may see, and one set with the generate preview: the set's JSON (edit it
// freely) sent to ApplicationSetService.Generate, which answers the Applications it would make and
// the caller's RBAC verdict on each, before anything is written; then saved (Create, with upsert for
// an existing set: all its Applications or none) or deleted.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import { ApiError } from '../api/errors';
import { QueryState } from '../app/QueryState';
import { ConfirmDelete } from '../forms/ConfirmDelete';
import { Field } from '../forms/Field';
import { placeViolations } from '../forms/violations';

interface AppSet {
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

interface Verdict {
  name?: string;
  namespace?: string;
  project?: string;
  action?: string;
  allowed?: boolean;
  reason?: string;
}

export function ApplicationSetsPage() {
  const list = useQuery({
    queryKey: ['applicationsets'],
    queryFn: async () =>
      (unwrap(await api.GET('/api/v1/applicationsets')) as { items?: AppSet[] }).items ?? [],
  });
  return (
    <section className="page">
      <div className="page-head">
        <h1>ApplicationSets</h1>
        <Link href="/applicationsets/new" className="button primary">
          New ApplicationSet
        </Link>
      </div>
      <QueryState isPending={list.isPending} error={list.error} what="list ApplicationSets">
        {() =>
          list.data!.length === 0 ? (
            <p className="muted">No ApplicationSet you may see.</p>
          ) : (
            <ul>
              {list.data!.map((s) => (
                <li key={`${s.metadata.namespace}/${s.metadata.name}`}>
                  <Link href={`/applicationsets/${s.metadata.namespace ?? ''}/${s.metadata.name}`}>
                    {s.metadata.name}
                  </Link>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </section>
  );
}

/** The parts of a stored set that a new one would carry (no status, no server-set metadata). */
export function editable(set: AppSet): unknown {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: {
      name: set.metadata.name,
      ...(set.metadata.namespace ? { namespace: set.metadata.namespace } : {}),
    },
    spec: set.spec ?? {},
  };
}

/** What a new set starts from: a list generator and a template to fill in. */
export const NEW_SET = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name: '', namespace: 'argocd' },
  spec: {
    goTemplate: true,
    generators: [{ list: { elements: [{ env: 'dev' }] } }],
    template: {
      metadata: { name: 'app-{{.env}}' },
      spec: {
        project: '',
        source: { repoURL: '', targetRevision: 'HEAD', path: '' },
        destination: { name: '', namespace: '{{.env}}' },
      },
    },
  },
};

export function NewApplicationSetPage() {
  return (
    <section className="page">
      <p>
        <Link href="/applicationsets">ApplicationSets</Link> / new
      </p>
      <h1>New ApplicationSet</h1>
      <Preview initial={JSON.stringify(NEW_SET, null, 2)} exists={false} />
    </section>
  );
}

export function ApplicationSetPage({ namespace, name }: { namespace: string; name: string }) {
  const qc = useQueryClient();
  const [, navigate] = useLocation();
  const del = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.DELETE('/api/v1/applicationsets/{name}', {
          params: { path: { name }, query: { appsetNamespace: namespace } },
        }),
      ),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['applicationsets'] });
      void qc.invalidateQueries({ queryKey: ['applications'] });
      navigate('/applicationsets');
    },
  });
  const set = useQuery({
    queryKey: ['applicationset', namespace, name],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/applicationsets/{name}', {
          params: { path: { name }, query: { appsetNamespace: namespace } },
        }),
      ) as AppSet,
  });
  return (
    <section className="page">
      <p>
        <Link href="/applicationsets">ApplicationSets</Link> / {name}
      </p>
      <div className="page-head">
        <h1>{name}</h1>
        {set.data && (
          <ConfirmDelete
            title={`Delete the ApplicationSet ${name}`}
            description="Its Applications are deleted with it, unless the set preserves them; you must be allowed to delete each."
            pending={del.isPending}
            error={del.error}
            onConfirm={() => del.mutateAsync()}
          />
        )}
      </div>
      <QueryState isPending={set.isPending} error={set.error} what={`get the ApplicationSet ${name}`}>
        {() => <Preview initial={JSON.stringify(editable(set.data!), null, 2)} exists />}
      </QueryState>
    </section>
  );
}

/** The editor's text as a set, or an error saying where the JSON is broken. */
export function parseSet(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`the set is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('the set must be a JSON object');
  return value as Record<string, unknown>;
}

function Preview({ initial, exists }: { initial: string; exists: boolean }) {
  const qc = useQueryClient();
  const [, navigate] = useLocation();
  const [text, setText] = useState(initial);
  const generate = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/applicationsets/generate', { body: { applicationSet: parseSet(text) } }),
      ) as { verdicts?: Verdict[] },
  });
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/applicationsets', {
          params: { query: { upsert: exists } },
          body: parseSet(text),
        }),
      ) as AppSet,
    onSuccess: (s) => {
      void qc.invalidateQueries({ queryKey: ['applicationsets'] });
      void qc.invalidateQueries({ queryKey: ['applications'] });
      if (!exists) navigate(`/applicationsets/${s.metadata.namespace ?? ''}/${s.metadata.name}`);
    },
  });
  // The editor is the one field: the api's violations (with their paths in the set) go under it,
  // the error's message above the results.
  const error = generate.error ?? save.error;
  const violations =
    error instanceof ApiError && error.details.length > 0 ? placeViolations(error, []).rest : [];
  return (
    <>
      <Field
        id="appset-json"
        label="The set (JSON)"
        hint="Preview generate writes nothing; Save writes the set and all its Applications, or none."
        errors={violations}
      >
        {(c) => (
          <textarea
            {...c}
            className="code editor"
            rows={16}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              save.reset();
            }}
          />
        )}
      </Field>
      <p className="actions start">
        <button
          type="button"
          className="button"
          onClick={() => {
            save.reset();
            generate.mutate();
          }}
          disabled={generate.isPending}
        >
          Preview generate
        </button>
        <button
          type="button"
          className="button primary"
          onClick={() => {
            generate.reset();
            save.mutate();
          }}
          disabled={save.isPending}
        >
          {exists ? 'Save' : 'Create'}
        </button>
      </p>
      {save.isSuccess && exists && (
        <p role="status" className="chain ok">
          Saved.
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {violations.length > 0 ? 'The api refused the set: see the problems under it.' : error.message}
        </p>
      )}
      {generate.data && <Verdicts verdicts={generate.data.verdicts ?? []} />}
    </>
  );
}

function Verdicts({ verdicts }: { verdicts: Verdict[] }) {
  const refused = verdicts.filter((v) => !v.allowed).length;
  return (
    <>
      <p role="status" className={refused ? 'chain broken' : 'chain ok'}>
        {verdicts.length} Applications;{' '}
        {refused ? `${refused} refused: saving would write none` : 'all allowed'}
      </p>
      <table className="table">
        <caption className="visually-hidden">generated Applications and your verdict on each</caption>
        <thead>
          <tr>
            <th scope="col">Application</th>
            <th scope="col">Project</th>
            <th scope="col">Action</th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {verdicts.map((v) => (
            <tr key={`${v.namespace}/${v.name}`}>
              <td>{v.name}</td>
              <td>{v.project}</td>
              <td>{v.action}</td>
              <td className={v.allowed ? undefined : 'error'}>
                {v.allowed ? '✔ allowed' : `✖ ${v.reason ?? 'refused'}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
