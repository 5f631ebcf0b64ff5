// Renders a notification's templates with the Go template module of @capstan/appset-engine (Go's
// text/template with sprig, as Argo CD Notifications renders them), each string bounded in time and
// size: templates are the operator's, but what they print comes from tenants' Applications.
import type { GoTemplateModule } from '@capstan/appset-engine';
import type { NotificationTemplate } from '@capstan/policy';

export interface RenderedNotification {
  message: string;
  title: string;
  subject: string;
  /** Per webhook service: method, path and body. */
  webhook: Record<string, { method: string; path: string; body: string }>;
}

export interface RenderLimits {
  /** Each string at most this many bytes. */
  maxBytes: number;
  /** Each string within this many milliseconds. */
  timeoutMs: number;
}

export class RenderError extends Error {
  override readonly name = 'RenderError';
}

async function renderString(
  module: GoTemplateModule,
  template: string,
  vars: Record<string, unknown>,
  limits: RenderLimits,
): Promise<string> {
  if (!template.includes('{{')) return template;
  const request = JSON.stringify({
    op: 'replace',
    goTemplate: true,
    options: [],
    maxBytes: limits.maxBytes,
    template,
    params: vars,
  });
  const res = JSON.parse(await module.call(request, limits.timeoutMs)) as { value?: unknown; error?: string };
  if (res.error !== undefined) throw new RenderError(res.error.slice(0, 500));
  return typeof res.value === 'string' ? res.value : '';
}

/** Renders the named templates into one notification (a later template's non-empty fields win, as Argo merges them). */
export async function renderNotification(
  module: GoTemplateModule,
  templates: readonly NotificationTemplate[],
  vars: Record<string, unknown>,
  limits: RenderLimits,
): Promise<RenderedNotification> {
  const out: RenderedNotification = { message: '', title: '', subject: '', webhook: {} };
  const r = (t: string) => renderString(module, t, vars, limits);
  for (const t of templates) {
    out.message = (await r(t.message)) || out.message;
    if (t.title) out.title = (await r(t.title)) || out.title;
    if (t.email?.subject) out.subject = (await r(t.email.subject)) || out.subject;
    for (const [name, w] of Object.entries(t.webhook))
      out.webhook[name] = { method: w.method, path: await r(w.path), body: await r(w.body) };
  }
  return out;
}
