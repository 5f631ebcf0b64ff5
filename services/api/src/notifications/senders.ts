// Delivers one rendered notification to one service: a webhook (HTTP with the template's method,
// path and body, the service's headers), a Slack-compatible incoming webhook (POST JSON {channel,
// text}), or email over SMTP (nodemailer). Targets come from the operator's argocd-notifications-cm,
// still: only http(s), no redirects followed, bounded in time. What a delivery reports (target,
// reason) never holds a secret: the target is scheme, host and path only, never the query or userinfo.
import nodemailer from 'nodemailer';
import type { NotificationService } from '@capstan/policy';
import type { RenderedNotification } from './render.js';

export interface SendOutcome {
  ok: boolean;
  httpStatus: number;
  reason: string;
}

/**
 * scheme://host/path of a webhook's URL (never userinfo, query or fragment); scheme://host only of a
 * Slack-compatible URL (whose path is its secret); smtp://host:port for email.
 */
export function targetOf(service: NotificationService, path = ''): string {
  if (service.kind === 'email') return `smtp://${service.host}:${service.port}`;
  try {
    const u = new URL(joinUrl(service.url, path));
    return `${u.protocol}//${u.host}${service.kind === 'webhook' ? u.pathname : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The service's URL with the template's path appended to its path (its query kept). */
function joinUrl(base: string, path: string): string {
  if (!path) return base;
  const u = new URL(base);
  const [p, q] = path.split('?', 2) as [string, string | undefined];
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/${p.replace(/^\/+/, '')}`;
  if (q) u.search = u.search ? `${u.search}&${q}` : `?${q}`;
  return u.toString();
}

function reasonOf(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string }; responseCode?: number };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  const code = e.cause?.code ?? e.code;
  if (e.responseCode) return `SMTP ${e.responseCode}`;
  return code ? `connection failed: ${code}` : 'delivery failed';
}

async function post(
  url: string,
  init: { method: string; headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<SendOutcome> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, httpStatus: 0, reason: 'refused: not a valid URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { ok: false, httpStatus: 0, reason: `refused: ${u.protocol} is not http(s)` };
  const hasBody = init.method !== 'GET' && init.method !== 'HEAD';
  try {
    const res = await fetch(u, {
      method: init.method,
      headers: init.headers,
      ...(hasBody ? { body: init.body } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    return { ok, httpStatus: res.status, reason: ok ? 'delivered' : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, httpStatus: 0, reason: reasonOf(err) };
  }
}

export async function send(
  service: NotificationService,
  recipient: string,
  n: RenderedNotification,
  timeoutMs: number,
): Promise<SendOutcome> {
  switch (service.kind) {
    case 'webhook': {
      const w = n.webhook[service.name] ?? { method: 'GET', path: '', body: '' };
      const headers = Object.fromEntries(service.headers.map((h) => [h.name, h.value]));
      let url: string;
      try {
        url = joinUrl(service.url, w.path);
      } catch {
        return { ok: false, httpStatus: 0, reason: 'refused: not a valid URL' };
      }
      return post(url, { method: w.method.toUpperCase(), headers, body: w.body }, timeoutMs);
    }
    case 'slack': {
      const body = JSON.stringify({
        ...(recipient ? { channel: recipient } : {}),
        text: n.title ? `${n.title}\n${n.message}` : n.message,
      });
      return post(
        service.url,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body },
        timeoutMs,
      );
    }
    case 'email':
      return sendEmail(service, recipient, n, timeoutMs);
  }
}

async function sendEmail(
  service: Extract<NotificationService, { kind: 'email' }>,
  recipient: string,
  n: RenderedNotification,
  timeoutMs: number,
): Promise<SendOutcome> {
  if (!recipient) return { ok: false, httpStatus: 0, reason: 'refused: no recipient address' };
  const transport = nodemailer.createTransport({
    host: service.host,
    port: service.port,
    secure: service.port === 465,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    ...(service.username ? { auth: { user: service.username, pass: service.password ?? '' } } : {}),
  });
  try {
    await transport.sendMail({
      from: service.from,
      to: recipient,
      subject: n.subject || n.title,
      text: n.message,
    });
    return { ok: true, httpStatus: 0, reason: 'delivered' };
  } catch (err) {
    return { ok: false, httpStatus: 0, reason: reasonOf(err) };
  } finally {
    transport.close();
  }
}
