// Projects the caller may see, and one project with its parent chain: each link's sources,
// destinations and destinationServiceAccounts side by side (a child can never be wider than a parent:
// what it may do is the intersection of the chain).
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import { readChain, type Link as ChainLink, type Project } from './chain';

const getProject = async (name: string) =>
  unwrap(await api.GET('/api/v1/projects/{name}', { params: { path: { name } } })) as Project;

export function ProjectsPage() {
  const list = useQuery({
    queryKey: ['projects'],
    queryFn: async () => (unwrap(await api.GET('/api/v1/projects')) as { items?: Project[] }).items ?? [],
  });
  return (
    <section className="page">
      <h1>Projects</h1>
      <QueryState isPending={list.isPending} error={list.error} what="list projects">
        {() => (
          <table className="table">
            <caption className="visually-hidden">projects</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Parent</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {list.data!.map((p) => (
                <tr key={p.metadata.name}>
                  <td>
                    <Link href={`/projects/${p.metadata.name}`}>{p.metadata.name}</Link>
                  </td>
                  <td>{p.spec.parentProject ?? '—'}</td>
                  <td>{p.spec.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
    </section>
  );
}

export function ProjectPage({ name }: { name: string }) {
  const chain = useQuery({ queryKey: ['project-chain', name], queryFn: () => readChain(name, getProject) });
  const first = chain.data?.[0];
  return (
    <section className="page">
      <p>
        <Link href="/projects">Projects</Link> / {name}
      </p>
      <h1>{name}</h1>
      <QueryState
        isPending={chain.isPending}
        error={chain.error ?? first?.error ?? null}
        what={`get the project ${name}`}
      >
        {() => (
          <ol className="chain-list" aria-label="parent chain, this project first">
            {chain.data!.map((l, i) => (
              <ChainItem key={l.name} link={l} child={i > 0} />
            ))}
          </ol>
        )}
      </QueryState>
    </section>
  );
}

function ChainItem({ link, child }: { link: ChainLink; child: boolean }) {
  const p = link.project;
  return (
    <li className="chain-link">
      {child && (
        <p className="muted" aria-hidden="true">
          ↑ bounded by
        </p>
      )}
      <h2>
        {link.name} {p && !p.spec.parentProject && <span className="muted">(root)</span>}
      </h2>
      {link.error || !p ? (
        <p className="error">Not visible to you: {link.error?.message}</p>
      ) : (
        <dl className="facts">
          <dt>Sources</dt>
          <dd className="mono">{(p.spec.sourceRepos ?? []).join(', ') || '—'}</dd>
          <dt>Destinations</dt>
          <dd className="mono">
            {(p.spec.destinations ?? [])
              .map((d) => `${d.server ?? d.name ?? ''} / ${d.namespace ?? ''}`)
              .join(', ') || '—'}
          </dd>
          <dt>ServiceAccounts</dt>
          <dd className="mono">
            {(p.spec.destinationServiceAccounts ?? [])
              .map((d) => `${d.server ?? ''} / ${d.namespace ?? ''} → ${d.defaultServiceAccount ?? ''}`)
              .join(', ') || '—'}
          </dd>
        </dl>
      )}
    </li>
  );
}
