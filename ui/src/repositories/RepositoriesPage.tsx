// Repository credentials per project: each credential the caller may see, grouped by its project
// (or unscoped), how it authenticates and which projects share its checkout (the projects whose
// Applications of that URL resolve to it: one checkout, DESIGN.md's credential selection). No
// secret field is shown in any form, not even its length: the api returns none.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import type { Repository } from '../api/live-views';

export function RepositoriesPage() {
  const list = useQuery({
    queryKey: ['repositories'],
    queryFn: async () =>
      (unwrap(await api.GET('/api/v1/repositories')) as { items?: Repository[] }).items ?? [],
  });
  return (
    <section className="page">
      <h1>Repositories</h1>
      <QueryState isPending={list.isPending} error={list.error} what="list repository credentials">
        {() => <RepositoryGroups items={list.data!} />}
      </QueryState>
    </section>
  );
}

/** How a credential authenticates, in words (whether a secret is held, never anything of it). */
export function authOf(r: Repository): string {
  if (r.hasSshPrivateKey) return 'SSH key';
  if (r.hasPassword) return `username ${r.username} and password`;
  if (r.username) return `username ${r.username}`;
  return 'anonymous';
}

export function groupByProject(items: readonly Repository[]): [string, Repository[]][] {
  const groups = new Map<string, Repository[]>();
  for (const r of items) groups.set(r.project ?? '', [...(groups.get(r.project ?? '') ?? []), r]);
  // Projects by name, the unscoped credentials (every project's fallback) last.
  return [...groups.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)));
}

export function RepositoryGroups({ items }: { items: readonly Repository[] }) {
  if (items.length === 0) return <p className="muted">No repository credentials you may see.</p>;
  return (
    <>
      {groupByProject(items).map(([project, repos]) => (
        <table className="table" key={project || '(unscoped)'}>
          <caption>
            {project ? `Project ${project}` : 'Unscoped (for projects without a credential of their own)'}
          </caption>
          <thead>
            <tr>
              <th scope="col">Repository</th>
              <th scope="col">Type</th>
              <th scope="col">Authentication</th>
              <th scope="col">Shares a checkout with</th>
            </tr>
          </thead>
          <tbody>
            {repos.map((r) => (
              <tr key={r.secretName ?? `${r.project}/${r.repo}`}>
                <td className="mono">
                  {r.repo}
                  {r.insecure ? ' (TLS not verified)' : ''}
                </td>
                <td>{r.type || 'git'}</td>
                <td>{authOf(r)}</td>
                <td>{sharing(r)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </>
  );
}

function sharing(r: Repository): string {
  const projects = r.sharedCheckoutProjects ?? [];
  if (projects.length === 0) return 'no Application uses it';
  if (projects.length === 1) return `only ${projects[0]}`;
  return projects.join(', ');
}
