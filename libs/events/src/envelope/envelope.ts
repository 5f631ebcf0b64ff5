// The CloudEvents 1.0 envelope (structured JSON) with Capstan's extensions. Every event on the bus,
// every outbox row and every stored event has exactly this shape.
import { z } from 'zod';
import { uuidv7 } from 'uuidv7';
import { currentTraceparent } from '@capstan/service';

/** `io.capstan.<aggregate>.<event>.v<N>`, or `io.capstan.cmd.<target>.<verb>.v<N>`, or `io.capstan.ext.<source>.<event>.v<N>`. */
export const eventTypePattern =
  /^io\.capstan\.(?:(cmd|ext)\.)?([a-z][a-z0-9-]*)\.([a-z][a-z0-9-]*)\.v([1-9][0-9]*)$/;

export const envelopeSchema = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1).max(128),
  source: z.string().min(1).max(256),
  type: z.string().regex(eventTypePattern, 'expected io.capstan.[cmd.|ext.]<aggregate>.<event>.v<N>'),
  subject: z.string().min(1).max(512),
  time: z.iso.datetime({ offset: true }),
  datacontenttype: z.literal('application/json').optional(),
  correlationid: z.string().min(1).max(128),
  causationid: z.string().min(1).max(128).optional(),
  /** The authenticated principal that caused the event (`user:alice`, `service:sync`, `system`). */
  actor: z.string().min(1).max(256),
  /** The aggregate's version after this event (events), absent for commands. */
  sequence: z.number().int().positive().optional(),
  /** W3C trace context of the span that published it (CloudEvents distributed-tracing extension). */
  traceparent: z
    .string()
    .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'expected a W3C traceparent')
    .optional(),
  data: z.unknown(),
});

export type Envelope = z.infer<typeof envelopeSchema>;

/** An event of one type: emmett-style `Event<'Type', Data>`, carried in the CloudEvents envelope. */
export type Event<Type extends string, Data> = Omit<Envelope, 'type' | 'data'> & { type: Type; data: Data };

export interface EventMeta {
  /** The aggregate or target, e.g. `applications/argocd/guestbook`. */
  subject: string;
  actor: string;
  correlationId?: string;
  causationId?: string;
  sequence?: number;
  /** `capstan/<service>` */
  source: string;
  id?: string;
  time?: Date;
}

export function newEventId(): string {
  return uuidv7();
}

export function newEvent<Type extends string, Data>(
  type: Type,
  data: Data,
  meta: EventMeta,
): Event<Type, Data> {
  const id = meta.id ?? newEventId();
  const traceparent = currentTraceparent();
  return {
    specversion: '1.0',
    id,
    source: meta.source,
    type,
    subject: meta.subject,
    time: (meta.time ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    // A new chain of events starts its own correlation id; followers pass theirs on.
    correlationid: meta.correlationId ?? id,
    ...(meta.causationId ? { causationid: meta.causationId } : {}),
    actor: meta.actor,
    ...(meta.sequence !== undefined ? { sequence: meta.sequence } : {}),
    // The span it was made in, when tracing is on: its consumers' spans continue that trace.
    ...(traceparent ? { traceparent } : {}),
    data,
  };
}

/** An event caused by another carries its correlation id on and names it as the cause. */
export function causedBy(
  cause: Pick<Envelope, 'id' | 'correlationid'>,
): Pick<EventMeta, 'correlationId' | 'causationId'> {
  return { correlationId: cause.correlationid, causationId: cause.id };
}
