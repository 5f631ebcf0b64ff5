// Every request of a sync to a target cluster goes through here: bounded in time (a hung API server
// must not hold a sync forever), counted for the Application whose work made it
// (`capstan_app_k8s_request_total`, with Argo CD's verbs: Get, List, Create, Patch, Update, Delete)
// and traced as a client span of the sync attempt's (when tracing is on).
import { annotateSpan, inSpan, SpanKind } from '@capstan/service';
import { SyncMetrics } from '../observability/sync-metrics.js';

/** A request the target cluster did not answer in time: retried like an unreachable cluster. */
export class ClusterTimeoutError extends Error {}

export interface CountedRequest {
  verb: string;
  kind: string;
  namespace?: string | undefined;
}

export interface RequestTarget {
  /** The cluster's name (messages) and server (labels, attributes). */
  name: string;
  server: string;
  timeoutMs: number;
  /** After a timeout: the connections may be stuck on a hung server. */
  onTimeout(): void;
}

export function boundedRequest<T>(
  target: RequestTarget,
  what: string,
  request: Promise<T>,
  counted: CountedRequest,
): Promise<T> {
  const attributes = {
    'server.address': target.server,
    'k8s.verb': counted.verb,
    'k8s.kind': counted.kind,
    'k8s.namespace': counted.namespace ?? '',
  };
  return inSpan(
    `k8s ${counted.verb} ${counted.kind}`,
    attributes,
    () => settled(target, what, request, counted),
    {
      kind: SpanKind.CLIENT,
    },
  );
}

function settled<T>(
  target: RequestTarget,
  what: string,
  request: Promise<T>,
  counted: CountedRequest,
): Promise<T> {
  const done = (err: unknown) => {
    SyncMetrics.requestDone({ server: target.server, ...counted }, err);
    const code = (err as { code?: unknown } | undefined)?.code;
    if (typeof code === 'number') annotateSpan({ 'http.response.status_code': code });
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      target.onTimeout();
      reject(
        new ClusterTimeoutError(
          `${what} on cluster ${target.name}: no answer within ${target.timeoutMs} ms (timeout)`,
        ),
      );
    }, target.timeoutMs);
  });
  return Promise.race([request, timeout])
    .then(
      (out) => {
        done(undefined);
        return out;
      },
      (err: unknown) => {
        done(err);
        throw err;
      },
    )
    .finally(() => clearTimeout(timer));
}
