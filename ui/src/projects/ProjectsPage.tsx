// Projects the caller may see (create one from here), and one project: edit, delete, and its parent
// chain as a graph and as a list, each link with its own restrictions, and the chain's effective
// (intersected) restrictions as the api computes them (libs/policy's effectiveRestrictions): the
// page computes no intersection of its own.
import { lazy, Suspense } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import { ConfirmDelete } from '../forms/ConfirmDelete';
import { readChain, type Link as ChainLink, type Project } from './chain';
import { ProjectFormDialog } from './ProjectForm';
import { Restrictions } from './Restrictions';
import { EffectiveRestrictions } from './EffectiveRestrictions';

const ChainGraph = lazy(() => import('./ChainGraph'));

const getProject = async (name: string) =>
  unwrap(await api.GET('/api/v1/projects/{name}', { params: { path: { name } } })) as Project;

export function ProjectsPage() {
  const [, navigate] = useLocation();
  const list = useQuery({
    queryKey: ['projects'],
    queryFn: async () => (unwrap(await api.GET('/api/v1/projects')) as { items?: Project[] }).items ?? [],
  });
  return (
    <section className="page">
      <div className="page-head">
        <h1>Projects</h1>
        <ProjectFormDialog onSaved={(p) => navigate(`/projects/${p.metadata.name}`)} />
      </div>
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
  const qc = useQueryClient();
  const [, navigate] = useLocation();
  const chain = useQuery({ queryKey: ['project-chain', name], queryFn: () => readChain(name, getProject) });
  const del = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/api/v1/projects/{name}', { params: { path: { name } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['projects'] });
      navigate('/projects');
    },
  });
  const first = chain.data?.[0];
  return (
    <section className="page">
      <p>
        <Link href="/projects">Projects</Link> / {name}
      </p>
      <div className="page-head">
        <h1>{name}</h1>
        {first?.project && (
          <>
            <ProjectFormDialog stored={first.project} />
            <ConfirmDelete
              title={`Delete the project ${name}`}
              description="A project with Applications or child projects cannot be deleted; the api says which."
              pending={del.isPending}
              error={del.error}
              onConfirm={() => del.mutateAsync()}
            />
          </>
        )}
      </div>
      <QueryState
        isPending={chain.isPending}
        error={chain.error ?? first?.error ?? null}
        what={`get the project ${name}`}
      >
        {() => <Chain name={name} links={chain.data!} />}
      </QueryState>
    </section>
  );
}

function Chain({ name, links }: { name: string; links: ChainLink[] }) {
  return (
    <>
      <h2>Parent chain</h2>
      <p className="muted">
        Each project can do only what every link of its chain allows: the api checks every link at each use,
        and names the link that denies. The graph shows each link&apos;s own restrictions, the table their
        intersection.
      </p>
      <Suspense fallback={<p className="loading">Loading the graph…</p>}>
        <ChainGraph links={links} />
      </Suspense>
      <EffectiveRestrictions name={name} />
      <h2>Each link</h2>
      <ol className="chain-list" aria-label="parent chain, this project first">
        {links.map((l, i) => (
          <ChainItem key={l.name} link={l} child={i > 0} />
        ))}
      </ol>
    </>
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
      <h3>
        {link.name} {p && !p.spec.parentProject && <span className="muted">(root)</span>}
      </h3>
      {link.error || !p ? (
        <p className="error">Not visible to you: {link.error?.message}</p>
      ) : (
        <Restrictions project={p} />
      )}
    </li>
  );
}
