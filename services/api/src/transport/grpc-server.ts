// The gRPC server: every method of every capstan.api.v1 service is served by the same wrapper
// (dispatch + one error mapping), built from the operation table.
import {
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Logger } from '@capstan/service';
import type { ApiServices } from '../services.js';
import { apiServices } from './operations/index.js';
import { dispatch } from './dispatch.js';
import { toGrpcError } from './errors.js';
import type { RequestMetrics } from './request-metrics.js';

function header(call: ServerUnaryCall<unknown, unknown>, key: string): string | undefined {
  const v = call.metadata.get(key)[0];
  return typeof v === 'string' ? v : undefined;
}

export async function startGrpcServer(opts: {
  services: ApiServices;
  logger: Logger;
  host: string;
  port: number;
  bodyLimit: number;
  metrics: RequestMetrics;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const server = new Server({
    'grpc.max_receive_message_length': opts.bodyLimit,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
  });
  for (const svc of apiServices) {
    const impl: UntypedServiceImplementation = {};
    for (const op of svc.operations) {
      impl[op.grpcMethod] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
        const raw = op.request.toJSON(call.request as never);
        opts.metrics
          .time(op.name, 'grpc', () =>
            dispatch(opts.services, op, raw, {
              authorization: header(call, 'authorization'),
              onBehalfOf: header(call, 'capstan-on-behalf-of'),
              correlationId: header(call, 'x-correlation-id'),
              via: 'grpc',
            }),
          )
          .then((view) => callback(null, op.response.fromJSON(view)))
          .catch((err: unknown) => callback(toGrpcError(err, opts.logger)));
      };
    }
    server.addService(svc.definition, impl);
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
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
