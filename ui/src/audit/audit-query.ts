// The audit explorer's query in the URL (deep links) and its rows as CSV; plain functions.
export const AUDIT_TABLES = [
  'sync_decisions',
  'resource_results',
  'credential_decisions',
  'access_decisions',
] as const;
export type AuditTable = (typeof AUDIT_TABLES)[number];
export const AUDIT_FILTERS = ['application', 'project', 'user', 'outcome', 'since', 'until'] as const;
export type AuditQuery = { table: AuditTable } & Record<(typeof AUDIT_FILTERS)[number], string>;

export interface AuditRow {
  id: number;
  table?: string;
  time: string;
  fields?: Record<string, unknown>;
  hash?: string;
  prevHash?: string;
}

export function auditQueryFrom(search: string): AuditQuery {
  const q = new URLSearchParams(search);
  const table = q.get('table');
  const out = {
    table: (AUDIT_TABLES as readonly string[]).includes(table ?? '') ? table : 'sync_decisions',
  } as AuditQuery;
  for (const f of AUDIT_FILTERS) out[f] = q.get(f) ?? '';
  return out;
}

export function auditQueryToSearch(q: AuditQuery): string {
  const p = new URLSearchParams({ table: q.table });
  for (const f of AUDIT_FILTERS) if (q[f]) p.set(f, q[f]);
  return p.toString();
}

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // A leading =, +, - or @ would be a formula in a spreadsheet: quote it as text.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) || safe !== s ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** RFC 4180 CSV: id, time, every field seen in the rows (sorted), hash. */
export function rowsToCsv(rows: readonly AuditRow[]): string {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.fields ?? {})))].sort();
  const header = ['id', 'time', ...keys, 'hash'];
  const lines = rows.map((r) =>
    [r.id, r.time, ...keys.map((k) => r.fields?.[k]), r.hash].map(csvCell).join(','),
  );
  return [header.join(','), ...lines].join('\r\n') + '\r\n';
}
