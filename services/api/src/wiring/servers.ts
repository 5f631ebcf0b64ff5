// The gRPC and HTTP/JSON servers of the same operations, with one request-metrics registry.
import type { ServiceContext } from '@capstan/service';
import type { TlsMaterial } from '@capstan/service-identity';
import type { ApiConfig } from '../api-service.js';
import type { ApiServices } from '../services.js';
import { startGrpcServer } from '../transport/grpc-server.js';
import { startHttpServer } from '../transport/http-server.js';
import { RequestMetrics } from '../transport/request-metrics.js';

export async function startServers(
  ctx: ServiceContext<ApiConfig>,
  services: ApiServices,
  tls: TlsMaterial | undefined,
): Promise<{ grpcPort: number; httpPort: number }> {
  const { config, logger } = ctx;
  const metrics = new RequestMetrics(ctx.metrics);
  const bodyLimit = config['api.body-limit'];
  const grpc = await startGrpcServer({
    services,
    logger,
    host: config['grpc.host'],
    port: config['grpc.port'],
    bodyLimit,
    metrics,
    tls,
  });
  ctx.onShutdown('grpc server', () => grpc.stop());
  const http = await startHttpServer({
    services,
    logger,
    host: config['api.http.host'],
    port: config['api.http.port'],
    bodyLimit,
    metrics,
    uiDir: config['api.ui.dir'],
  });
  ctx.onShutdown('http server', () => http.stop());
  logger.info({ grpcPort: grpc.port, httpPort: http.port }, 'api listening');
  return { grpcPort: grpc.port, httpPort: http.port };
}
