// What a failed request to a target cluster (or a peer) says: its HTTP status, the API server's
// message, and whether the cluster was unreachable (the sync is retried later) or answered.
import { CapstanError } from '@capstan/service';
import { ClusterTimeoutError } from './bounded-request.js';

export function httpStatusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** The API server's own message (Status.message), else the error's. */
export function kubeMessageOf(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) return parsed.message;
    } catch {
      return body.slice(0, 500);
    }
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Connection-level failures: the cluster is down or unreachable, so the sync should be retried later. */
export function isUnreachable(err: unknown): boolean {
  if (err instanceof ClusterTimeoutError) return true;
  // A peer's failure as fromPeer relays it (the api's and the repo service's clients).
  if (err instanceof CapstanError) return err.code === 'UNAVAILABLE' || err.code === 'DEADLINE_EXCEEDED';
  // gRPC (the api's and the repo service's clients): UNAVAILABLE and DEADLINE_EXCEEDED.
  if (err && typeof err === 'object' && 'metadata' in err && 'details' in err) {
    const code = (err as { code?: number }).code;
    return code === 14 || code === 4;
  }
  if (httpStatusOf(err) !== undefined) {
    const s = httpStatusOf(err)!;
    return s === 429 || s === 502 || s === 503 || s === 504;
  }
  const text = `${(err as Error)?.message ?? ''} ${String((err as { cause?: { code?: string } })?.cause?.code ?? '')} ${String((err as { code?: string }).code ?? '')}`;
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|socket hang up|fetch failed|timeout/i.test(
    text,
  );
}
