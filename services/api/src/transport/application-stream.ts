// The UI's live view of one Application (Argo CD's GET /api/v1/stream/applications?name=, as
// Server-Sent Events): authenticated like any call (token or session cookie), RBAC applications/get
// checked (and audited) at the start and again for every change it sends, so a revoked role or a
// deleted Application ends the stream. Changes come from the bus: the sync status consumer tells
// ApplicationChanges after applying an event, and the stream reads the Application again; there is
// no polling. Each message is `{"result":{"type":"MODIFIED","application":{...}}}`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Logger } from '@capstan/service';
import type { ApiServices } from '../services.js';
import { authenticatedContext, type CallMeta } from './dispatch.js';
import { applicationGetView } from './operations/applications.js';
import { parseOrThrow } from '../support/validation.js';
import { toHttpError } from './errors.js';

const OP = 'ApplicationService.Watch';
const HEARTBEAT_MS = 15_000;
const query = z.strictObject({
  name: z.string().min(1, 'required').max(253),
  appNamespace: z.string().max(253).default(''),
});

const frame = (type: string, application: unknown) =>
  `data: ${JSON.stringify({ result: { type, application } })}\n\n`;

export function registerApplicationStream(
  app: FastifyInstance,
  services: ApiServices,
  metaOf: (req: FastifyRequest) => CallMeta,
  logger: Logger,
): void {
  app.get('/api/v1/stream/applications', async (req, reply) => {
    let first;
    let read: () => ReturnType<typeof applicationGetView>;
    try {
      const q = parseOrThrow(query, req.query ?? {});
      const ctx = await authenticatedContext(services, OP, metaOf(req));
      read = () =>
        applicationGetView(services, ctx, { name: q.name, appNamespace: q.appNamespace, project: '' });
      first = await read();
    } catch (err) {
      const e = toHttpError(err, logger);
      return reply.status(e.status).send(e.body);
    }
    const meta = (first as { metadata: { namespace?: string; name: string } }).metadata;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(frame('ADDED', first));
    // One read at a time; changes that arrive meanwhile are folded into one more read.
    let reading = false;
    let again = false;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      unwatch();
      clearInterval(heartbeat);
      res.end();
    };
    const onChange = async () => {
      if (reading) return void (again = true);
      reading = true;
      try {
        do {
          again = false;
          const view = await read();
          if (!closed) res.write(frame('MODIFIED', view));
        } while (again && !closed);
      } catch (err) {
        const e = toHttpError(err, logger);
        if (!closed) res.write(`event: error\ndata: ${JSON.stringify(e.body)}\n\n`);
        close();
      } finally {
        reading = false;
      }
    };
    const unwatch = services.changes.watch(meta.namespace ?? '', meta.name, () => void onChange());
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    req.raw.on('close', close);
  });
}
