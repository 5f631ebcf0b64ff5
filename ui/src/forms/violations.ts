// The api's field violations ({ field, description } in an invalid request's details) placed next to
// the form field they are about: a violation belongs to the form field whose path is the longest
// prefix of its own (spec.sourceRepos[2] belongs to spec.sourceRepos, shown as "line 3: …"); the
// rest, and an error without details, are shown above the form. The messages are the api's own.
import { ApiError } from '../api/errors';

export type Placed = { byField: Record<string, string[]>; rest: string[] };

function under(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);
}

/** The part of a violation's path below the form field, in words: "[2].namespace" → "line 3, namespace". */
function relative(rest: string): string {
  const m = /^\[(\d+)\]\.?(.*)$/.exec(rest);
  if (m) return `line ${Number(m[1]) + 1}${m[2] ? `, ${m[2]}` : ''}`;
  return rest.replace(/^\./, '');
}

/**
 * `prefix` is what the request wraps the form's object in (project. for ProjectService.Create),
 * stripped before matching; `fields` the form's fields as api paths.
 */
export function placeViolations(error: unknown, fields: readonly string[], prefix = ''): Placed {
  const out: Placed = { byField: {}, rest: [] };
  if (!error) return out;
  const details = error instanceof ApiError ? error.details : [];
  if (details.length === 0) {
    out.rest.push((error as Error).message);
    return out;
  }
  for (const d of details) {
    const full = d.field ?? '';
    const path = prefix && full.startsWith(prefix) ? full.slice(prefix.length) : full;
    const field = fields.filter((f) => under(path, f)).sort((a, b) => b.length - a.length)[0];
    const description = d.description ?? 'invalid';
    if (field === undefined) {
      out.rest.push(full ? `${full}: ${description}` : description);
      continue;
    }
    const sub = relative(path.slice(field.length));
    (out.byField[field] ??= []).push(sub ? `${sub}: ${description}` : description);
  }
  return out;
}

/** Lines of a textarea as a list: trimmed, blank lines dropped. */
export const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
