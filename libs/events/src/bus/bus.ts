// The bus: a NATS connection with JetStream, the namespace, and the catalog used to check every event
// on the way in and out.
import {
  connect,
  headers as natsHeaders,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
} from 'nats';
import type { Envelope } from '../envelope/envelope.js';
import { catalog as defaultCatalog } from '../catalog/index.js';
import type { Catalog, EventDefinition } from '../catalog/define.js';
import { extSourcePattern, inboxPrefixOf } from '@capstan/bus-auth';
import { provisionStreams } from './streams.js';
import { InvalidArgumentError } from '@capstan/service';
import {
  startConsumer,
  type ConsumerOptions,
  type DeadLetterStore,
  type RunningConsumer,
} from './consumer.js';

export interface BusOptions {
  url: string;
  /** Names this connection (`capstan-sync`) and the CloudEvents source. */
  service: string;
  namespace?: string;
  /** Replicas of each stream provision() creates or updates (setting bus.stream-replicas; default 1). */
  streamReplicas?: number;
  catalog?: Catalog;
  /**
   * The bus user (`api`, `sync`, ...; see @capstan/bus-auth) and its password; never logged. Without
   * a user the connection is anonymous, which Capstan's own servers refuse.
   */
  user?: string;
  password?: string;
  /**
   * Where every consumer of this bus records its dead letters unless it names its own store
   * (startBackbone: the service's `<schema>.dead_letters`), so no consumer can forget it.
   */
  deadLetters?: DeadLetterStore;
}

export interface Bus {
  readonly namespace: string;
  readonly catalog: Catalog;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** Full subject of an event type below this bus's namespace. */
  subjectOf(type: string): string;
  provision(): Promise<void>;
  /**
   * Publishes one event, de-duplicated by the broker on its id. Checks it against the catalog first.
   * `source`: the source token of an external type published by source (`ext.<source>.…`).
   */
  publish(event: Envelope, options?: { source?: string }): Promise<{ seq: number; duplicate: boolean }>;
  /** Publishes an already-encoded, already-checked event (the outbox relay's path). */
  publishEncoded(subject: string, id: string, payload: string): Promise<{ seq: number; duplicate: boolean }>;
  consume<const D extends readonly EventDefinition[]>(options: ConsumerOptions<D>): Promise<RunningConsumer>;
  /** A consumer started on this bus, by durable name (dead-letter replay hands it its message again). */
  consumerNamed(durable: string): RunningConsumer | undefined;
  isConnected(): boolean;
  close(): Promise<void>;
}

export async function connectBus(options: BusOptions): Promise<Bus> {
  const namespace = options.namespace ?? 'capstan';
  const catalog = options.catalog ?? defaultCatalog;
  const nc = await connect({
    servers: options.url.split(','),
    name: `capstan-${options.service}`,
    ...(options.user ? { user: options.user, pass: options.password ?? '' } : {}),
    // Replies come to this user's own inbox, the only one its permissions let it read.
    inboxPrefix: inboxPrefixOf(options.user || options.service),
    maxReconnectAttempts: -1,
  });
  const js = nc.jetstream();
  const jsm = await nc.jetstreamManager();
  const consumers = new Set<RunningConsumer>();

  const subjectOf = (type: string) => {
    const d = catalog.get(type);
    if (!d) throw new InvalidArgumentError(`unknown event type ${type}`);
    return `${namespace}.${d.subject}`;
  };

  const publishEncoded = async (subject: string, id: string, payload: string) => {
    const h = natsHeaders();
    h.set('Nats-Msg-Id', id);
    h.set('Content-Type', 'application/cloudevents+json');
    const ack = await js.publish(subject, payload, { headers: h, msgID: id });
    return { seq: ack.seq, duplicate: ack.duplicate };
  };

  const bus: Bus = {
    namespace,
    catalog,
    nc,
    js,
    jsm,
    subjectOf,
    provision: () => provisionStreams(jsm, namespace, options.streamReplicas ?? 1),
    async publish(event, publishOptions = {}) {
      const d = catalog.get(event.type);
      if (!d) throw new InvalidArgumentError(`unknown event type ${event.type}`);
      const checked = d.data.safeParse(event.data);
      if (!checked.success)
        throw new InvalidArgumentError(`${event.type} fails its schema: ${checked.error.message}`);
      let subject = d.subject;
      if (subject.includes('*')) {
        if (!publishOptions.source || !extSourcePattern.test(publishOptions.source))
          throw new InvalidArgumentError(
            `${event.type} is published below a source token: give a valid source`,
          );
        subject = subject.replace('*', publishOptions.source);
      }
      return publishEncoded(`${namespace}.${subject}`, event.id, JSON.stringify(event));
    },
    publishEncoded,
    async consume(consumerOptions) {
      const running = await startConsumer(
        bus,
        options.deadLetters && !consumerOptions.deadLetters
          ? { ...consumerOptions, deadLetters: options.deadLetters }
          : consumerOptions,
      );
      consumers.add(running);
      return running;
    },
    consumerNamed: (durable) => [...consumers].find((c) => c.durable === durable),
    isConnected: () => !nc.isClosed(),
    async close() {
      await Promise.all([...consumers].map((c) => c.stop()));
      await nc.drain();
    },
  };
  return bus;
}
