// Property-based fuzzing of every event type of the catalog, on its own subject (external ones
// below a source token), against the real NATS JetStream and PostgreSQL: generated CloudEvents that
// are malformed in every way (not JSON, not an object, attributes missing or of the wrong type,
// unknown types, data of the wrong shape and size, invalid UTF-8). Consumers keep running; each
// message is either handled (its data passed the type's schema) or recorded once in the dead
// letters, never both, never delivered again. CAPSTAN_FUZZ_RUNS sets how many (1,000 in npm test).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { backboneFixture, type BackboneFixture } from '../test-support/backbone-fixture.js';
import { connectBus, type Bus } from './bus.js';
import { streamName } from './streams.js';
import { allEventDefinitions } from '../catalog/index.js';
import type { EventDefinition } from '../catalog/define.js';
import { postgresDeadLetters } from '../consumers/dead-letters.js';
import { gitPush } from '../catalog/repository.js';
import { newEvent } from '../envelope/envelope.js';
import type { RunningConsumer } from './consumer.js';

const RUNS = Number(process.env.CAPSTAN_FUZZ_RUNS ?? 1_000);
const SEED = Number(process.env.CAPSTAN_FUZZ_SEED ?? Date.now() % 2 ** 31);

const edgeString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', '1.0', '\u0000', '\ud800', 'x'.repeat(100_000), 'https://u:secret@h.example/r.git'),
);
const { value: edgeValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    edgeString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(edgeString, tie('value'), { maxKeys: 4 }),
  ),
}));

type Payload = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'json'; value: unknown };

/** A CloudEvent of `type` broken one way or another (sometimes, by chance, not broken at all). */
function malformed(def: EventDefinition): fc.Arbitrary<Payload> {
  const base = () => ({
    specversion: '1.0',
    id: uuidv7(),
    source: 'fuzz',
    type: def.type,
    subject: 'fuzz/1',
    time: new Date().toISOString(),
    actor: 'user:fuzz',
  });
  const attribute = fc.constantFrom(
    'specversion',
    'id',
    'source',
    'type',
    'subject',
    'time',
    'actor',
    'data',
  );
  return fc.oneof(
    // Data of the wrong shape (or, rarely, a valid one).
    edgeValue.map((data) => ({ kind: 'json' as const, value: { ...base(), data } })),
    // An attribute missing or of the wrong type.
    fc.tuple(attribute, fc.option(edgeValue)).map(([k, v]) => {
      const e: Record<string, unknown> = { ...base(), data: {} };
      if (v === null) delete e[k];
      else e[k] = v;
      return { kind: 'json' as const, value: e };
    }),
    // Not an object at all.
    edgeValue.map((value) => ({ kind: 'json' as const, value })),
    // Not JSON, or not UTF-8.
    fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: 'bytes' as const, bytes })),
    fc.string({ maxLength: 64 }).map((s) => ({ kind: 'bytes' as const, bytes: new TextEncoder().encode(s) })),
  );
}

describe('catalog fuzzing: malformed CloudEvents on every subject', () => {
  let fx: BackboneFixture;
  let bus: Bus;
  const handled = new Set<number>();
  const consumers: RunningConsumer[] = [];

  beforeAll(async () => {
    fx = await backboneFixture();
    // The production catalog (the fixture's bus has the test catalog), as the operator's admin user:
    // the only user that may publish on every subject.
    bus = await connectBus({
      ...fx.tbus.connection('admin'),
      service: 'fuzz',
      deadLetters: postgresDeadLetters(fx.db, 'svc'),
    });
    await bus.provision();
    // One consumer per stream, of every type the catalog has there.
    for (const channel of ['evt', 'cmd', 'ext'] as const) {
      const events = allEventDefinitions.filter((d) => d.channel === channel);
      consumers.push(
        await bus.consume({
          durable: `fuzz-${channel}`,
          events,
          handle: async (_e, ctx) => void handled.add(ctx.streamSequence * 10 + channelIndex(channel)),
        }),
      );
    }
  });
  afterAll(async () => {
    await bus?.close();
    await fx?.close();
  });

  const channelIndex = (c: string) => ['evt', 'cmd', 'ext'].indexOf(c);

  it('given a message with a NUL byte (found by the fuzzer: PostgreSQL text refused it, so it came back forever), then it is recorded once, the NUL escaped', async () => {
    const ack = await bus.js.publish(
      bus.subjectOf(gitPush.type),
      new TextEncoder().encode('{"a":"x\u0000y"}'),
    );
    let row: { payload: string; deliveries: number } | undefined;
    for (let i = 0; i < 200 && !row; i++) {
      row = (
        await sql<{ payload: string; deliveries: number }>`
          select payload, deliveries from svc.dead_letters where consumer = 'fuzz-ext' and stream_sequence = ${ack.seq}`.execute(
          fx.db,
        )
      ).rows[0];
      if (!row) await new Promise((r) => setTimeout(r, 50));
    }
    expect(row).toEqual({ payload: '{"a":"x\\u0000y"}', deliveries: 1 });
  });

  it(`given ${RUNS} malformed CloudEvents over every catalog type, then each is handled or dead-lettered exactly once and the consumers keep going`, async () => {
    const samples = fc.sample(
      fc.constantFrom(...allEventDefinitions).chain((def) => malformed(def).map((p) => ({ def, p }))),
      { numRuns: RUNS, seed: SEED },
    );
    const published: number[] = [];
    for (const { def, p } of samples) {
      const subject = `${bus.namespace}.${def.subject.replace('*', 'fuzz')}`;
      const data = p.kind === 'bytes' ? p.bytes : JSON.stringify(p.value);
      const ack = await bus.js.publish(subject, data);
      published.push(ack.seq * 10 + channelIndex(def.channel));
    }
    const dead = async () => {
      const rows = await sql<{ consumer: string; stream_sequence: string }>`
        select consumer, stream_sequence from svc.dead_letters`.execute(fx.db);
      return rows.rows.map((r) => Number(r.stream_sequence) * 10 + channelIndex(r.consumer.slice(5)));
    };
    const deadline = Date.now() + 120_000;
    let recorded: number[] = [];
    while (Date.now() < deadline) {
      recorded = await dead();
      if (handled.size + recorded.length >= published.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Two ack waits later, nothing came back.
    await new Promise((r) => setTimeout(r, 1_000));
    recorded = await dead();
    const both = recorded.filter((s) => handled.has(s));
    expect({
      seed: SEED,
      both,
      missing: published.filter((s) => !handled.has(s) && !recorded.includes(s)),
    }).toEqual({
      seed: SEED,
      both: [],
      missing: [],
    });
    expect(new Set(recorded).size).toBe(recorded.length);
    for (const channel of ['evt', 'cmd', 'ext'] as const) {
      const info = await bus.jsm.consumers.info(streamName(bus.namespace, channel), `fuzz-${channel}`);
      expect({ channel, redelivered: info.num_redelivered, pending: info.num_ack_pending }).toEqual({
        channel,
        redelivered: 0,
        pending: 0,
      });
    }
    // Still consuming: a good push goes through.
    const good = newEvent(
      gitPush.type,
      { repoURL: 'https://git.example/ok.git' },
      { subject: 'r', actor: 'a', source: 'ext/git' },
    );
    const ack = await bus.publish(good);
    const seq = ack.seq * 10 + channelIndex('ext');
    for (let i = 0; i < 100 && !handled.has(seq); i++) await new Promise((r) => setTimeout(r, 50));
    expect(handled.has(seq)).toBe(true);
    // No password from a URL survives in the record.
    const leaked = await sql<{ n: string }>`
      select count(*) as n from svc.dead_letters where payload like '%secret@%'`.execute(fx.db);
    expect(Number(leaked.rows[0]!.n)).toBe(0);
    console.log(
      `catalog fuzz: ${published.length} messages over ${allEventDefinitions.length} types (seed ${SEED}): ${handled.size - 1} handled, ${recorded.length} dead-lettered`,
    );
  }, 300_000);
});
