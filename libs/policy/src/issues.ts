// Every rejection in this library is a list of issues, each naming the field it is about in the
// notation operators read in kubectl output: `spec.destinationServiceAccounts[2].namespace`.

export interface PolicyIssue {
  /** Field path, e.g. `spec.destinations[0].server`; empty when the issue is about the whole object. */
  readonly path: string;
  readonly message: string;
}

export function formatPath(segments: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

export function joinPath(base: string, rest: string): string {
  if (base === '') return rest;
  if (rest === '') return base;
  return rest.startsWith('[') ? `${base}${rest}` : `${base}.${rest}`;
}

export function formatIssue(issue: PolicyIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

export function formatIssues(issues: readonly PolicyIssue[]): string {
  return issues.map(formatIssue).join('; ');
}

/** Input that is not a valid Argo CD object (or set of objects); carries every issue found. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  constructor(
    /** Where the input came from (a file name, `event <id>`), for the message. */
    readonly origin: string,
    readonly issues: readonly PolicyIssue[],
    options?: { cause?: unknown },
  ) {
    super(`${origin}: ${formatIssues(issues)}`, options);
  }
}
