// Whether an error says the database could not be reached or went away (a restart, a failover, the
// network), as opposed to an answer about the data. A bus consumer retries such an error far longer
// than any other (@capstan/events Settlement): a command that meets a database outage must wait for
// the database, never be dead-lettered because the outage outlasted the usual few tries.

/** Node's socket errors for a server that is not there (refused, reset, unreachable, timed out). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs for a connection that failed or a server going away: class 08
 * (connection_exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
 */
const SERVER_GOING_AWAY = /^(08...|57P0[123])$/;

/** node-postgres' own words for a connection lost or never made (no code on these errors). */
const DRIVER_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection timeout/i;

export function isDatabaseOutage(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): boolean => {
    if (e === null || typeof e !== 'object' || depth > 8 || seen.has(e)) return false;
    seen.add(e);
    const { code, message, cause, errors } = e as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_GOING_AWAY.test(code))) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return true;
    // A connection to every address of a name (IPv4 and IPv6) refused is an AggregateError.
    if (Array.isArray(errors) && errors.some((x) => visit(x, depth + 1))) return true;
    return visit(cause, depth + 1);
  };
  return visit(err, 0);
}
