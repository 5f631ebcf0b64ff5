// ApplicationSets the caller may see, and one set with the generate preview: the set's JSON (edit it
// freely: nothing is saved) sent to ApplicationSetService.Generate, which answers the Applications it
// would make and the caller's RBAC verdict on each, before anything is written.
import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';

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
      <h1>ApplicationSets</h1>
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

export function ApplicationSetPage({ namespace, name }: { namespace: string; name: string }) {
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
      <h1>{name}</h1>
      <QueryState isPending={set.isPending} error={set.error} what={`get the ApplicationSet ${name}`}>
        {() => <Preview initial={JSON.stringify(editable(set.data!), null, 2)} />}
      </QueryState>
    </section>
  );
}

function Preview({ initial }: { initial: string }) {
  const [text, setText] = useState(initial);
  const generate = useMutation({
    mutationFn: async () => {
      let applicationSet: Record<string, unknown>;
      try {
        applicationSet = JSON.parse(text) as Record<string, unknown>;
      } catch (e) {
        throw new Error(`the set is not valid JSON: ${(e as Error).message}`);
      }
      return unwrap(await api.POST('/api/v1/applicationsets/generate', { body: { applicationSet } })) as {
        verdicts?: Verdict[];
      };
    },
  });
  return (
    <>
      <label htmlFor="appset-json">The set (JSON; nothing is saved here)</label>
      <textarea
        id="appset-json"
        className="code editor"
        rows={16}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <p>
        <button
          type="button"
          className="button primary"
          onClick={() => generate.mutate()}
          disabled={generate.isPending}
        >
          Preview generate
        </button>
      </p>
      {generate.error && (
        <p role="alert" className="error">
          {generate.error.message}
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
