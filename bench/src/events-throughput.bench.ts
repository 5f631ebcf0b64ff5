// Committed event -> consumer applied, through the transactional outbox, the relay, JetStream and an
// idempotent batch consumer, side by side with a bare JetStream publish/consume loop on the same
// server in the same run. Goals (issue 2): ≥ 10,000 events/s end to end and ≥ 0.5× the bare loop;
// p99 < 25 ms at an offered 1,000 events/s.
import { sql } from 'kysely';
import { z } from 'zod';
import { AckPolicy, DeliverPolicy } from 'nats';
import { createDb, migrateToLatest } from '@capstan/db';
import {
  applyBatchOnce,
  appendToStream,
  connectBus,
  createCatalog,
  defineEvent,
  eventStoreMigrations,
  newEvent,
  startOutboxRelay,
  type Bus,
  type EventStoreDatabase,
} from '@capstan/events';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { report, summarize, type Figure } from './harness.js';

const tick = defineEvent({
  type: 'io.capstan.bench.tick.v1',
  description: 'benchmark event',
  data: z.object({ n: z.number() }),
});
const catalog = createCatalog([tick]);
const THROUGHPUT_EVENTS = 30_000;
const RATE = 1000;
const RATE_SECONDS = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function bareLoop(bus: Bus) {
  const subject = `${bus.namespace}.evt.bench.bare`;
  const stream = `${bus.namespace}_EVT`.toUpperCase();
  await bus.jsm.consumers.add(stream, {
    durable_name: 'bare',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
    filter_subject: subject,
  });
  const consumer = await bus.js.consumers.get(stream, 'bare');
  const messages = await consumer.consume({ max_messages: 1024 });
  const latencies: number[] = [];
  let received = 0;
  let lastAt = 0;
  let target = 0;
  let done: () => void = () => {};
  void (async () => {
    for await (const m of messages) {
      const sentAt = Number(m.headers?.get('sent-at'));
      lastAt = performance.now();
      latencies.push(lastAt - sentAt);
      m.ack();
      if (++received >= target) done();
    }
  })();
  const { headers } = await import('nats');
  const publish = (n: number) => {
    const h = headers();
    h.set('sent-at', String(performance.now()));
    return bus.js.publish(
      subject,
      JSON.stringify(
        newEvent(tick.type, { n }, { subject: 'bench/bare', actor: 'bench', source: 'capstan/bench' }),
      ),
      { headers: h },
    );
  };

  // Throughput: publish as fast as the server takes them, 1,000 in flight.
  target = THROUGHPUT_EVENTS;
  const finished = new Promise<void>((r) => (done = r));
  const start = performance.now();
  for (let i = 0; i < THROUGHPUT_EVENTS; i += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, THROUGHPUT_EVENTS - i) }, (_, k) => publish(i + k)),
    );
  }
  await finished;
  const throughput = THROUGHPUT_EVENTS / ((lastAt - start) / 1000);

  // Latency at a fixed offered load.
  latencies.length = 0;
  received = 0;
  target = RATE * RATE_SECONDS;
  const finished2 = new Promise<void>((r) => (done = r));
  await offer(RATE, RATE_SECONDS, async (n) => {
    await Promise.all(Array.from({ length: n }, (_, k) => publish(k)));
  });
  await finished2;
  await messages.close();
  return { throughput, latency: summarize(latencies) };
}

/** Offers `rate` events/s for `seconds`, in 5 ms slots, without catching up on missed slots silently. */
async function offer(rate: number, seconds: number, send: (n: number) => Promise<void>) {
  const slotMs = 5;
  const perSlot = (rate * slotMs) / 1000;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let slot = 0; slot < (seconds * 1000) / slotMs; slot++) {
    const due = start + slot * slotMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(send(perSlot));
  }
  await Promise.all(pending);
}

async function capstanLoop(bus: Bus, databaseUrl: string) {
  const db = createDb<EventStoreDatabase>(databaseUrl, { max: 12 });
  await migrateToLatest(db, { schema: 'bench', migrations: eventStoreMigrations('bench') });
  await sql`create table if not exists bench.applied (event_id text primary key, n int)`.execute(db);
  const relay = await startOutboxRelay({ db, databaseUrl, schema: 'bench', bus, batchSize: 1000 });

  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  let applied = 0;
  let lastAt = 0;
  let target = 0;
  let done: () => void = () => {};
  const consumer = await bus.consume({
    durable: 'bench-projection',
    events: [tick],
    maxBatch: 1000,
    handleBatch: async (events) => {
      await applyBatchOnce(
        db,
        { schema: 'bench', consumer: 'bench-projection' },
        events,
        async (trx, fresh) => {
          await sql`insert into bench.applied (event_id, n)
          select * from unnest(${fresh.map((e) => e.id)}::text[], ${fresh.map((e) => e.data.n)}::int[])`.execute(
            trx,
          );
        },
      );
      lastAt = performance.now();
      for (const e of events) {
        const c = committedAt.get(e.id);
        if (c !== undefined) latencies.push(lastAt - c);
      }
      applied += events.length;
      if (applied >= target) done();
    },
  });

  let streamNo = 0;
  const commit = async (n: number) => {
    const streamId = `bench/${streamNo++}`;
    const events = Array.from({ length: n }, (_, k) =>
      newEvent(tick.type, { n: k }, { subject: streamId, actor: 'bench', source: 'capstan/bench' }),
    );
    await db
      .transaction()
      .execute((trx) =>
        appendToStream(trx, { schema: 'bench', streamId, expectedVersion: 0, events, catalog }),
      );
    const t = performance.now();
    for (const e of events) committedAt.set(e.id, t);
  };

  // Throughput: 4 writers, 250 events per transaction (a busy api committing many commands).
  target = THROUGHPUT_EVENTS;
  const finished = new Promise<void>((r) => (done = r));
  const start = performance.now();
  const perWriter = THROUGHPUT_EVENTS / 4;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = 0; i < perWriter; i += 250) await commit(250);
    }),
  );
  await finished;
  const throughput = THROUGHPUT_EVENTS / ((lastAt - start) / 1000);

  // Latency at a fixed offered load of 1,000 events/s.
  latencies.length = 0;
  applied = 0;
  target = RATE * RATE_SECONDS;
  const finished2 = new Promise<void>((r) => (done = r));
  await offer(RATE, RATE_SECONDS, commit);
  await finished2;

  await consumer.stop();
  await relay.stop();
  const count = await sql<{ c: number }>`select count(*)::int as c from bench.applied`.execute(db);
  await db.destroy();
  return { throughput, latency: summarize(latencies), appliedRows: count.rows[0]!.c };
}

export async function main(): Promise<void> {
  const [tdb, tbus] = await Promise.all([createTestDatabase('capstan_bench'), createTestBus('bench')]);
  // The benchmark's own catalog and subjects: as the operator's admin bus user.
  const bus = await connectBus({ ...tbus.connection('admin'), service: 'bench', catalog });
  await bus.provision();
  try {
    const bare = await bareLoop(bus);
    const capstan = await capstanLoop(bus, tdb.url);
    const ratio = capstan.throughput / bare.throughput;
    const figures: Figure[] = [
      { name: 'bare JetStream publish->consume', value: Math.round(bare.throughput), unit: 'events/s' },
      {
        name: 'capstan commit->applied',
        value: Math.round(capstan.throughput),
        unit: 'events/s',
        goal: '≥ 10000',
        met: capstan.throughput >= 10_000,
      },
      { name: 'capstan / bare', value: ratio, unit: '×', goal: '≥ 0.5', met: ratio >= 0.5 },
      { name: `bare latency p50 @${RATE}/s`, value: bare.latency.p50, unit: 'ms' },
      { name: `bare latency p99 @${RATE}/s`, value: bare.latency.p99, unit: 'ms' },
      { name: `capstan latency p50 @${RATE}/s`, value: capstan.latency.p50, unit: 'ms' },
      {
        name: `capstan latency p99 @${RATE}/s`,
        value: capstan.latency.p99,
        unit: 'ms',
        goal: '< 25',
        met: capstan.latency.p99 < 25,
      },
    ];
    report('events-throughput', figures, {
      events: THROUGHPUT_EVENTS,
      offeredRate: RATE,
      offeredSeconds: RATE_SECONDS,
      appliedRows: capstan.appliedRows,
      method:
        'capstan: 4 writers x 250 events/transaction -> outbox -> relay (LISTEN/NOTIFY, 1000/batch) -> JetStream -> durable consumer -> applyBatchOnce projection',
    });
  } finally {
    await bus.close();
    await Promise.all([tdb.drop(), tbus.cleanup()]);
  }
}
