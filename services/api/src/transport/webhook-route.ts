// The HTTP side of the git webhook (webhooks/webhook.service.ts): POST /api/webhook, unauthenticated
// like Argo CD's (each delivery carries its provider's signature instead). The sender's rate and the
// deliveries in flight are checked before the body is read; the body is read raw (signatures are over
// the exact bytes) up to webhook.maxPayloadSizeMB, a declared larger one is refused without reading
// it, a slow one is cut off after 30 s. Answers are plain text, as Argo CD's.
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@capstan/service';
import type { Answer, WebhookService } from '../webhooks/webhook.service.js';

const READ_TIMEOUT_MS = 30_000;

/** The body, or 'too-large' (the stream is then destroyed), or 'timeout'. */
export function readBounded(
  stream: Readable,
  limit: number,
  timeoutMs = READ_TIMEOUT_MS,
): Promise<Buffer | 'too-large' | 'timeout'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    const finish = (v: Buffer | 'too-large' | 'timeout') => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      if (v !== 'too-large' && v !== 'timeout') return resolve(v);
      stream.destroy();
      resolve(v);
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish('too-large');
      chunks.push(chunk);
    });
    stream.once('end', () => finish(Buffer.concat(chunks)));
    stream.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const send = (reply: FastifyReply, a: Answer) =>
  reply.status(a.status).type('text/plain; charset=utf-8').send(a.message);

async function deliver(webhooks: WebhookService, req: FastifyRequest, reply: FastifyReply, logger: Logger) {
  const peer = req.ip;
  const refused = await webhooks.admit(req.headers, peer);
  if (refused) return send(reply.header('connection', 'close'), refused);
  try {
    const limit = await webhooks.maxPayloadBytes();
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit)
      return send(reply.header('connection', 'close'), await webhooks.tooLarge(req.headers, peer, limit));
    const stream = (req.body as Readable | undefined) ?? req.raw;
    const body = await readBounded(stream, limit);
    if (body === 'too-large')
      return send(reply.header('connection', 'close'), await webhooks.tooLarge(req.headers, peer, limit));
    if (body === 'timeout')
      return send(reply.header('connection', 'close'), {
        status: 408,
        message: 'Webhook processing failed: request body too slow',
      });
    return send(reply, await webhooks.handle({ headers: req.headers, body, peer }));
  } catch (err) {
    logger.error({ err }, 'webhook delivery failed');
    return send(reply, { status: 500, message: 'Webhook processing failed' });
  } finally {
    webhooks.release();
  }
}

export async function registerWebhook(
  app: FastifyInstance,
  webhooks: WebhookService,
  logger: Logger,
): Promise<void> {
  await app.register(async (scope) => {
    // Every content type is the raw stream here: the handler reads and bounds it.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.post('/api/webhook', (req, reply) => deliver(webhooks, req, reply, logger));
  });
}
