// The web UI's built files (ui/dist, see docs/ui.md) on the HTTP port: hashed files under /assets
// cached for a year (their name changes with their content), index.html never cached, and any other
// GET outside /api answered with index.html so the UI's own routes survive a reload (SPA fallback).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** ui/dist of the workspace this package sits in (services/api/{src,dist}/transport -> ui/dist). */
export function defaultUiDir(): string {
  return fileURLToPath(new URL('../../../../ui/dist', import.meta.url));
}

export async function registerUi(app: FastifyInstance, dir: string): Promise<boolean> {
  if (!existsSync(join(dir, 'index.html'))) return false;
  await app.register(fastifyStatic, {
    root: dir,
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders(reply, path) {
      void reply.header(
        'cache-control',
        path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  app.get('/', (_req, reply) => sendIndex(reply));
  return true;
}

/**
 * index.html, never cached, with a policy that lets the page run only its own scripts (an injected
 * script could not load or send anywhere else) and never be framed (clickjacking).
 */
export function sendIndex(reply: FastifyReply) {
  return reply
    .header('cache-control', 'no-cache')
    .header(
      'content-security-policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .sendFile('index.html');
}

/** A GET outside /api that matched no file: the UI's index.html, whose router shows the page. */
export function isUiRoute(method: string, url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return (method === 'GET' || method === 'HEAD') && path !== '/api' && !path.startsWith('/api/');
}
