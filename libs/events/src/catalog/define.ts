// How an event type is declared: its CloudEvents type string and a zod schema for its data. The
// static type is inferred from the schema, so the runtime check and the compile-time type cannot drift.
import type { z } from 'zod';
import { InvalidArgumentError } from '@capstan/service';
import { eventTypePattern, type Event } from '../envelope/envelope.js';

export type Channel = 'evt' | 'cmd' | 'ext';

export interface EventDefinition<Type extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: Type;
  readonly data: S;
  readonly description: string;
  /** Public types get a JSON Schema file so other systems can validate what they publish. */
  readonly public: boolean;
  readonly channel: Channel;
  /**
   * Subject below the bus namespace: `evt.application.created`, `cmd.sync.request`, `ext.git.push`;
   * `ext.*.sync.request` for an external event published under its source's own token
   * (`ext.<source>.sync.request`, the source being bound to the publisher's bus user).
   */
  readonly subject: string;
}

export type EventOf<D extends EventDefinition> =
  D extends EventDefinition<infer T, infer S> ? Event<T, z.output<S>> : never;

export function defineEvent<const Type extends string, S extends z.ZodType>(options: {
  type: Type;
  data: S;
  description: string;
  public?: boolean;
  /** ext only: published below the source's token, `ext.<source>.<aggregate>.<event>`. */
  bySource?: boolean;
}): EventDefinition<Type, S> {
  const m = eventTypePattern.exec(options.type);
  if (!m)
    throw new Error(
      `event type ${options.type} does not follow io.capstan.[cmd.|ext.]<aggregate>.<event>.v<N>`,
    );
  const channel = (m[1] ?? 'evt') as Channel;
  return {
    type: options.type,
    data: options.data,
    description: options.description,
    public: options.public ?? true,
    channel,
    subject: options.bySource && channel === 'ext' ? `ext.*.${m[2]}.${m[3]}` : `${channel}.${m[2]}.${m[3]}`,
  };
}

export interface Catalog {
  readonly definitions: ReadonlyMap<string, EventDefinition>;
  get(type: string): EventDefinition | undefined;
}

export function createCatalog(definitions: readonly EventDefinition[]): Catalog {
  const map = new Map<string, EventDefinition>();
  for (const d of definitions) {
    if (map.has(d.type)) throw new Error(`event type ${d.type} is defined twice`);
    map.set(d.type, d);
  }
  return { definitions: map, get: (type) => map.get(type) };
}

/**
 * The default of a switch over a union of events (or any union) that handles every member: it does
 * not compile while a member is unhandled. Reached at run time only if the union and the events
 * received disagree; such an event can never be handled, so it is dead-lettered, not retried.
 */
export function assertNever(value: never, what = 'event'): never {
  const type = (value as { type?: unknown } | null)?.type;
  throw new InvalidArgumentError(`unexpected ${what}${typeof type === 'string' ? ` ${type}` : ''}`);
}
