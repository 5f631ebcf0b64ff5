// The HTTP/JSON API (fastify): the same operations as gRPC at Argo CD-style paths. Path, query and
// body are merged into the operation's input and validated by its schema (unknown fields are
// errors); bodies over api.body-limit are refused with 413; every error has one JSON shape.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ValidationError, type Logger } from '@capstan/service';
import type { ApiServices } from '../services.js';
import { allOperations } from './operations/index.js';
import { REFUSED_METADATA_KEYS } from '@capstan/service-identity';
import { dispatch, type CallMeta } from './dispatch.js';
import { registerApplicationStream } from './application-stream.js';
import { registerWebhook } from './webhook-route.js';
import { registerSsoRoutes } from './sso-routes.js';
import { toHttpError } from './errors.js';
import { openApiDocument } from './openapi.js';
import { EncodedResponse } from './encoded-response.js';
import type { RequestMetrics } from './request-metrics.js';
import { cookieCredentials, cookieSessionView } from './session-cookie.js';
import { defaultUiDir, isUiRoute, registerUi, sendIndex } from './ui-assets.js';

function fastifyError(err: {
  statusCode?: number;
  code?: string;
  message: string;
}): { status: number; body: unknown } | undefined {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { status: 413, body: { code: 'RESOURCE_EXHAUSTED', message: 'request body is too large' } };
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status: 415, body: { code: 'INVALID_ARGUMENT', message: 'send application/json' } };
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err.statusCode === 400) {
    return {
      status: 400,
      body: { code: 'INVALID_ARGUMENT', message: `invalid request body: ${err.message.toLowerCase()}` },
    };
  }
  return undefined;
}

/** What an HTTP request says about its caller: its token or the UI's session cookie. */
export function callMetaOf(req: FastifyRequest): CallMeta {
  const auth = req.headers.authorization;
  return {
    authorization: typeof auth === 'string' ? auth : undefined,
    // No client certificate on HTTP: a service token is refused here (service-identity).
    call: {
      declaredActor: REFUSED_METADATA_KEYS.some((k) => req.headers[k] !== undefined),
      cookie: cookieCredentials(req),
    },
    correlationId:
      typeof req.headers['x-correlation-id'] === 'string' ? req.headers['x-correlation-id'] : undefined,
    peer: req.ip,
    via: 'http',
  };
}

export async function startHttpServer(opts: {
  services: ApiServices;
  logger: Logger;
  host: string;
  port: number;
  bodyLimit: number;
  metrics: RequestMetrics;
  /** The web UI's built files; empty or absent: the workspace's ui/dist, when it was built. */
  uiDir?: string;
}): Promise<{ port: number; app: FastifyInstance; stop(): Promise<void> }> {
  const app = Fastify({
    bodyLimit: opts.bodyLimit,
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
    // A path that is not valid percent-encoded UTF-8 (found by http-fuzz.int.test.ts): fastify's own
    // answer had another shape and named no field.
    frameworkErrors: (err, _req, reply) =>
      void (reply as unknown as FastifyReply).status(400).send({
        code: 'INVALID_ARGUMENT',
        message: `invalid request path: ${err.message.toLowerCase()}`,
        details: [{ field: 'path', description: 'must be percent-encoded UTF-8' }],
      }),
  });
  const document = openApiDocument();

  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
    const known = fastifyError(err);
    if (known) return reply.status(known.status).send(known.body);
    const e = toHttpError(err, opts.logger);
    return reply.status(e.status).send(e.body);
  });
  const ui = await registerUi(app, opts.uiDir || defaultUiDir());
  app.setNotFoundHandler((req, reply) =>
    ui && isUiRoute(req.method, req.url)
      ? sendIndex(reply)
      : reply
          .status(404)
          .send({ code: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );

  app.get('/api/openapi.json', async () => document);
  registerApplicationStream(app, opts.services, callMetaOf, opts.logger);
  await registerWebhook(app, opts.services.webhooks, opts.logger);
  registerSsoRoutes(app, opts.services, opts.logger);

  for (const op of allOperations) {
    if (!op.http) continue;
    app.route({
      method: op.http.method,
      url: op.http.path,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        try {
          const body = req.body;
          if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
            throw new ValidationError([{ field: '(body)', description: 'must be a JSON object' }]);
          }
          const bodyField = op.http!.body;
          const raw = {
            ...(req.query as object),
            ...(bodyField ? (body === undefined ? {} : { [bodyField]: body }) : (body as object | undefined)),
            ...(req.params as object),
          };
          const view = await opts.metrics.time(op.name, 'http', () =>
            dispatch(opts.services, op, raw, callMetaOf(req)),
          );
          if (view instanceof EncodedResponse)
            return reply.status(200).type('application/json; charset=utf-8').send(view.json());
          return reply.status(200).send(cookieSessionView(op.name, req, reply, view));
        } catch (err) {
          const e = toHttpError(err, opts.logger);
          return reply.status(e.status).send(e.body);
        }
      },
    });
  }
  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  opts.logger.info({ ui: ui ? opts.uiDir || defaultUiDir() : 'not built' }, 'web ui');
  return { port, app, stop: () => app.close() };
}
