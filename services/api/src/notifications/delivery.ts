// Sends the queued notifications (api.notification_deliveries) outside the event handlers: a due
// row is claimed (for update skip locked, leased so another replica leaves it), rendered, sent, and
// its attempt recorded (api.notification_attempts and audit.notification_deliveries) with its next
// attempt after an exponential backoff, until it is sent or its attempts are spent (failed). Rows are
// sent concurrently: a slow or failing receiver holds only its own row, each bounded in time.
import { sql, type Kysely, type Selectable } from 'kysely';
import { appendAudit } from '@capstan/db';
import type { Logger } from '@capstan/service';
import { GoTemplateModule } from '@capstan/appset-engine';
import type { NotificationTemplate } from '@capstan/policy';
import type { ApiDatabase, NotificationDeliveriesTable } from '../support/db.table.js';
import type { NotificationsSettings } from './notifications-config.js';
import { renderNotification, type RenderedNotification } from './render.js';
import { send, targetOf, type SendOutcome } from './senders.js';

export interface DeliveryOptions {
  /** Attempts per notification before it is recorded as failed. */
  maxAttempts: number;
  /** Delay before the second attempt; doubled for each further one (capped at 5 minutes). */
  backoffMs: number;
  /** Each attempt (connection, request, answer) within this many milliseconds. */
  timeoutMs: number;
  /**
   * The longest the delivery waits before it looks for due rows again. It is told when rows are
   * queued on this replica, and wakes by itself when the next retry falls due; the poll is the safety
   * net for what neither covers (rows of a replica that died with their lease).
   */
  pollMs: number;
  /** Rendering bounds of each template string. */
  render: { maxBytes: number; timeoutMs: number };
  /** The Go template module's directory (default: @capstan/appset-engine's dist/gotemplate). */
  templateDir?: string;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  maxAttempts: 5,
  backoffMs: 2000,
  timeoutMs: 10_000,
  pollMs: 30_000,
  render: { maxBytes: 64 * 1024, timeoutMs: 2000 },
};

const BATCH = 16;
const LEASE_MS = 5 * 60_000;

type Row = Selectable<NotificationDeliveriesTable>;

export function backoffOf(opts: Pick<DeliveryOptions, 'backoffMs'>, attempt: number): number {
  return Math.min(opts.backoffMs * 2 ** (attempt - 1), 5 * 60_000);
}

export class NotificationDelivery {
  private module: Promise<GoTemplateModule> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      settings: NotificationsSettings;
      logger: Logger;
      options: DeliveryOptions;
    },
  ) {}

  start(): void {
    this.wake();
  }

  /** Looks for due rows now (after the current round, if one runs). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'notifications: delivery round failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.module) await (await this.module.catch(() => undefined))?.close();
  }

  private async round(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      for (;;) {
        const rows = await this.claim();
        if (rows.length === 0) break;
        await Promise.allSettled(rows.map((r) => this.deliver(r)));
        if (this.stopped) return;
      }
      this.sleep(await this.nextDueMs());
    } catch (err) {
      this.sleep(Math.min(this.deps.options.pollMs, 1000));
      throw err;
    }
  }

  /** Wakes again after `ms` (at most the poll), unless told or stopped before. */
  private sleep(ms: number | undefined): void {
    if (this.stopped) return;
    const wait = Math.min(this.deps.options.pollMs, ms ?? Infinity);
    this.timer = setTimeout(() => this.wake(), wait);
    this.timer.unref();
  }

  /** Milliseconds until the next pending row is due (a retry's backoff), by the database's clock. */
  private async nextDueMs(): Promise<number | undefined> {
    const { rows } = await sql<{ ms: number | null }>`
      select extract(epoch from (min(next_attempt_at) - now())) * 1000 as ms
        from api.notification_deliveries where status = 'pending'`.execute(this.deps.db);
    const ms = rows[0]?.ms;
    // A margin past it, so the claim finds it due; a row due already (another replica holds it)
    // is looked at again in a second.
    return ms === null || ms === undefined ? undefined : Number(ms) > 0 ? Number(ms) + 50 : 1000;
  }

  private async claim(): Promise<Row[]> {
    return this.deps.db.transaction().execute(async (trx) => {
      const rows = await trx
        .withSchema('api')
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', new Date())
        .orderBy('id')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length > 0)
        await trx
          .withSchema('api')
          .updateTable('notification_deliveries')
          .set({ next_attempt_at: new Date(Date.now() + LEASE_MS) })
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .execute();
      return rows;
    });
  }

  private templates(): Promise<GoTemplateModule> {
    this.module ??= GoTemplateModule.load(
      this.deps.options.templateDir ? { dir: this.deps.options.templateDir } : {},
    );
    return this.module;
  }

  private async attempt(row: Row): Promise<{ outcome: SendOutcome; target: string }> {
    const config = await this.deps.settings.current();
    const service = config.services.get(row.service);
    if (!service)
      return { outcome: { ok: false, httpStatus: 0, reason: `no service ${row.service}` }, target: '' };
    const names = row.templates as string[];
    const missing = names.find((n) => !config.templates.has(n));
    if (missing)
      return {
        outcome: { ok: false, httpStatus: 0, reason: `no template ${missing}` },
        target: targetOf(service),
      };
    let rendered: RenderedNotification;
    try {
      const templates = names.map((n) => config.templates.get(n)!) as NotificationTemplate[];
      const vars = { ...(row.vars as Record<string, unknown>), recipient: row.recipient };
      rendered = await renderNotification(await this.templates(), templates, vars, this.deps.options.render);
    } catch (err) {
      const reason = `template: ${(err as Error).message}`.slice(0, 500);
      return { outcome: { ok: false, httpStatus: 0, reason }, target: targetOf(service) };
    }
    const path = service.kind === 'webhook' ? (rendered.webhook[service.name]?.path ?? '') : '';
    const outcome = await send(service, row.recipient, rendered, this.deps.options.timeoutMs);
    return { outcome, target: targetOf(service, path) };
  }

  private async deliver(row: Row): Promise<void> {
    const { outcome, target } = await this.attempt(row).catch((err: unknown) => ({
      outcome: { ok: false, httpStatus: 0, reason: `delivery failed: ${(err as Error).name}` },
      target: '',
    }));
    const attempt = row.attempts + 1;
    const last = attempt >= this.deps.options.maxAttempts;
    const result = outcome.ok ? 'sent' : last ? 'failed' : 'retrying';
    const at = new Date();
    await this.deps.db.transaction().execute(async (trx) => {
      await trx
        .withSchema('api')
        .insertInto('notification_attempts')
        .values({
          delivery_id: row.id,
          attempt,
          at,
          outcome: result,
          http_status: outcome.httpStatus,
          reason: outcome.reason,
        })
        .execute();
      await trx
        .withSchema('api')
        .updateTable('notification_deliveries')
        .set({
          attempts: attempt,
          last_error: outcome.ok ? '' : outcome.reason,
          ...(result === 'retrying'
            ? { next_attempt_at: new Date(at.getTime() + backoffOf(this.deps.options, attempt)) }
            : { status: result, finished_at: at }),
        })
        .where('id', '=', row.id)
        .execute();
      await appendAudit(trx, 'notification_deliveries', {
        application: row.application,
        trigger: row.trigger,
        service: row.service,
        recipient: row.recipient,
        target,
        attempt,
        outcome: result,
        http_status: outcome.httpStatus,
        reason: outcome.reason,
      });
    });
  }
}
