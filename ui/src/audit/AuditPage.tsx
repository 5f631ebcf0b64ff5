// The audit explorer: one table of the tamper-evident trail at a time, filtered (the filters are
// the URL, so a view is a deep link), newest first, with the hash chain's verification status and
// a CSV export of what is shown.
import { useState, type FormEvent } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useLocation, useSearch } from 'wouter';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import {
  AUDIT_FILTERS,
  AUDIT_TABLES,
  auditQueryFrom,
  auditQueryToSearch,
  rowsToCsv,
  type AuditQuery,
  type AuditRow,
} from './audit-query';
import { ErrorAlert } from '../forms/DialogParts';

export const AUDIT_PAGE = 200;

type AuditPageResult = { rows?: AuditRow[]; nextPageToken?: string };

/** The rows page by page, newest first: the next page is asked with the api's nextPageToken. */
function useAuditRows(q: AuditQuery) {
  return useInfiniteQuery({
    queryKey: ['audit', q],
    initialPageParam: '',
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET('/api/v1/audit/{table}', {
          params: {
            path: { table: q.table },
            query: {
              ...Object.fromEntries(AUDIT_FILTERS.map((f) => [f, q[f]])),
              limit: AUDIT_PAGE,
              pageToken: pageParam,
            },
          },
        }),
      ) as AuditPageResult,
    getNextPageParam: (last) => last.nextPageToken || undefined,
  });
}

function useChainStatus(table: string) {
  return useQuery({
    queryKey: ['audit-verify', table],
    queryFn: async () =>
      unwrap(await api.POST('/api/v1/audit/verify', { body: { table } })) as {
        tables?: { table: string; ok?: boolean; checked?: number; firstBrokenId?: number; reason?: string }[];
      },
  });
}

function ChainStatus({ table }: { table: string }) {
  const v = useChainStatus(table);
  const t = v.data?.tables?.[0];
  if (v.isPending) return <p className="muted">Verifying the hash chain…</p>;
  if (v.error || !t) return null;
  return t.ok ? (
    <p className="chain ok" role="status">
      <span aria-hidden="true">✔</span> Hash chain verified: {t.checked ?? 0} rows intact
    </p>
  ) : (
    <p className="chain broken" role="alert">
      <span aria-hidden="true">✖</span> Hash chain broken at row {t.firstBrokenId}: {t.reason}
    </p>
  );
}

function download(rows: AuditRow[], table: string) {
  const url = URL.createObjectURL(new Blob([rowsToCsv(rows)], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `capstan-audit-${table}.csv`;
  a.click();
  URL.revokeObjectURL(url);
}

export function AuditPage() {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const q = auditQueryFrom(search);
  const [draft, setDraft] = useState(q);
  const rows = useAuditRows(q);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    navigate(`${location}?${auditQueryToSearch(draft)}`);
  };
  return (
    <section className="page">
      <h1>Audit</h1>
      <form className="audit-filters" onSubmit={submit} aria-label="audit filters">
        <label>
          Table
          <select
            value={draft.table}
            onChange={(e) => setDraft({ ...draft, table: e.target.value as AuditQuery['table'] })}
          >
            {AUDIT_TABLES.map((t) => (
              <option key={t} value={t}>
                {t.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        {AUDIT_FILTERS.map((f) => (
          <label key={f}>
            {f}
            <input
              value={draft[f]}
              placeholder={f === 'since' || f === 'until' ? 'RFC 3339 time' : ''}
              onChange={(e) => setDraft({ ...draft, [f]: e.target.value })}
            />
          </label>
        ))}
        <button type="submit" className="button primary">
          Apply
        </button>
      </form>
      <ChainStatus table={q.table} />
      <QueryState
        isPending={rows.isPending}
        error={rows.data ? null : rows.error}
        what={`read the audit table ${q.table}`}
      >
        {() => (
          <>
            <AuditRows rows={rows.data!.pages.flatMap((p) => p.rows ?? [])} table={q.table} />
            {rows.hasNextPage && (
              <p>
                <button
                  type="button"
                  className="button"
                  disabled={rows.isFetchingNextPage}
                  onClick={() => void rows.fetchNextPage()}
                >
                  {rows.isFetchingNextPage ? 'Loading…' : 'Load older rows'}
                </button>
              </p>
            )}
            <ErrorAlert error={rows.error} />
          </>
        )}
      </QueryState>
    </section>
  );
}

const summaryKeys = [
  'application',
  'project',
  'actor',
  'subject',
  'decision',
  'outcome',
  'service_account',
  'username',
  'verb',
  'kind',
  'name',
  'resource',
  'action',
  'object',
  'reason',
  'message',
];

function AuditRows({ rows, table }: { rows: AuditRow[]; table: string }) {
  return (
    <>
      <p>
        {rows.length} rows shown{' '}
        <button
          type="button"
          className="button ghost"
          onClick={() => download(rows, table)}
          disabled={rows.length === 0}
        >
          Export CSV
        </button>
      </p>
      <table className="table audit">
        <caption className="visually-hidden">audit rows, newest first</caption>
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Time</th>
            <th scope="col">Record</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>{r.id}</td>
              <td>{new Date(r.time).toLocaleString()}</td>
              <td>
                <details>
                  <summary>
                    {summaryKeys
                      .filter(
                        (k) => r.fields?.[k] !== undefined && r.fields[k] !== null && r.fields[k] !== '',
                      )
                      .map((k) => `${k}=${String(r.fields![k])}`)
                      .join(' · ')}
                  </summary>
                  <pre className="code">{JSON.stringify(r.fields, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
