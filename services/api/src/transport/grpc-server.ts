// The gRPC server: every method of every capstan.api.v1 service is served by the same wrapper
// (dispatch + one error mapping), built from the operation table. Responses are encoded inside the
// timed region (the latency histogram includes building and encoding the message), and handed to
// grpc-js as bytes.
import {
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type MethodDefinition,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Logger } from '@capstan/service';
import {
  toServiceError,
  DELEGATION_METADATA_KEY,
  peerService,
  REFUSED_METADATA_KEYS,
  serverCredentials,
  type TlsMaterial,
} from '@capstan/service-identity';
import type { ApiServices } from '../services.js';
import { apiServices } from './operations/index.js';
import { dispatch } from './dispatch.js';
import type { RequestMetrics } from './request-metrics.js';
import type { Operation } from './operation.js';
import { EncodedResponse } from './encoded-response.js';

/** The response's bytes: pre-encoded ones as they are, any other view through its message type. */
function encoderFor(op: Operation, method: MethodDefinition<unknown, unknown>): (view: unknown) => Buffer {
  return (view) =>
    view instanceof EncodedResponse ? view.proto() : method.responseSerialize(op.response.fromJSON(view));
}

const passBytes = (bytes: Buffer): Buffer => bytes;

function header(call: ServerUnaryCall<unknown, unknown>, key: string): string | undefined {
  const v = call.metadata.get(key)[0];
  return typeof v === 'string' ? v : undefined;
}

/** grpc-js peers look like `ipv4:127.0.0.1:5000` or `ipv6:[::1]:5000`: the address without the port. */
export function peerAddress(peer: string): string | undefined {
  const rest = peer.replace(/^ipv[46]:/, '');
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(rest);
  if (v6) return v6[1];
  const colon = rest.lastIndexOf(':');
  return (colon > 0 ? rest.slice(0, colon) : rest) || undefined;
}

/** One method's handler: the call's metadata become the dispatch's call meta; errors map once. */
function unaryHandler(
  op: Operation,
  encode: (view: unknown) => Buffer,
  opts: { services: ApiServices; logger: Logger; metrics: RequestMetrics },
) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    const raw = op.request.toJSON(call.request);
    opts.metrics
      .time(op.name, 'grpc', async () =>
        encode(
          await dispatch(opts.services, op, raw, {
            authorization: header(call, 'authorization'),
            call: {
              peerService: peerService(call),
              delegation: header(call, DELEGATION_METADATA_KEY),
              declaredActor: REFUSED_METADATA_KEYS.some((k) => call.metadata.get(k).length > 0),
            },
            correlationId: header(call, 'x-correlation-id'),
            peer: peerAddress(call.getPeer()),
            via: 'grpc',
          }),
        ),
      )
      .then((bytes) => callback(null, bytes))
      .catch((err: unknown) => callback(toServiceError(err, opts.logger)));
  };
}

export async function startGrpcServer(opts: {
  services: ApiServices;
  logger: Logger;
  host: string;
  port: number;
  bodyLimit: number;
  metrics: RequestMetrics;
  /** TLS of the port: client certificates are asked for but optional (users have none). */
  tls: TlsMaterial | undefined;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const server = new Server({
    'grpc.max_receive_message_length': opts.bodyLimit,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
  });
  for (const svc of apiServices) {
    const impl: UntypedServiceImplementation = {};
    const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
    for (const op of svc.operations) {
      const method = svc.definition[op.grpcMethod] as MethodDefinition<unknown, unknown>;
      // The response leaves as bytes: encoderFor encodes it with the method's own message type, or
      // passes a list that was encoded once for both transports (EncodedResponse).
      definition[op.grpcMethod] = { ...method, responseSerialize: passBytes as (v: unknown) => Buffer };
      impl[op.grpcMethod] = unaryHandler(op, encoderFor(op, method), opts);
    }
    server.addService(definition as ServiceDefinition, impl);
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${opts.host}:${opts.port}`,
      opts.tls ? serverCredentials(opts.tls, false) : ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 5000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
