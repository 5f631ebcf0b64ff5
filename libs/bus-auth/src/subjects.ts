// Names on the bus. Everything lives below a namespace (default `capstan`, the first subject token)
// so that installations, and tests, can share one NATS server without seeing each other.

export type StreamKind = 'evt' | 'cmd' | 'ext' | 'dlq';
export const streamKinds: readonly StreamKind[] = ['evt', 'cmd', 'ext', 'dlq'];

/** `capstan` + `cmd` -> `CAPSTAN_CMD`. */
export function streamName(namespace: string, kind: StreamKind): string {
  return `${namespace}_${kind}`.toUpperCase();
}

export function deadLetterSubject(namespace: string, consumer: string): string {
  return `${namespace}.dlq.${consumer}`;
}

/**
 * The reply subjects of one bus user: `_INBOX_<user>.<id>`. Each user may subscribe to its own
 * inbox only, so nobody reads the replies (JetStream acknowledgements, API answers, pulled
 * messages) of another.
 */
export function inboxPrefixOf(user: string): string {
  return `_INBOX_${user}`;
}

/** A bus user's name: the service, `ext-<source>` for another system, `admin` for operators. */
export const userNamePattern = /^[a-z][a-z0-9-]{0,62}$/;

/** The source token of `ext.<source>.…` (and of its `ext-<source>` user). */
export const extSourcePattern = /^[a-z][a-z0-9-]{0,62}$/;

/** The source of an external event: the token after `<namespace>.ext.` of its subject. */
export function extSourceOf(subject: string): string | undefined {
  const tokens = subject.split('.');
  return tokens[1] === 'ext' ? tokens[2] : undefined;
}
