// Stream provisioning against the real NATS JetStream (a single server here): the replica count of
// setting bus.stream-replicas reaches every stream, and a count the server cannot hold stops
// provisioning with NATS's reason and the setting's name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBus, type TestBus } from '@capstan/test/infra';
import { connectBus, type Bus } from './bus.js';
import { provisionStreams, streamKinds, streamName } from './streams.js';

describe('provisionStreams', () => {
  let tbus: TestBus;
  let bus: Bus;

  beforeAll(async () => {
    tbus = await createTestBus();
    bus = await connectBus({ ...tbus.connection('admin'), service: 'test', streamReplicas: 1 });
  });
  afterAll(async () => {
    await bus.close();
    await tbus.cleanup();
  });

  it('refuses to create streams with more replicas than a single server holds, naming stream and setting', async () => {
    const first = streamName(bus.namespace, streamKinds[0]!);
    await expect(provisionStreams(bus.jsm, bus.namespace, 3)).rejects.toThrow(
      `cannot provision JetStream stream ${first} with 3 replica(s) (bus.stream-replicas): replicas > 1 not supported in non-clustered mode`,
    );
    await expect(bus.jsm.streams.info(first)).rejects.toThrow(/stream not found/);
  });

  it('creates every stream with the configured replica count, and again changes nothing', async () => {
    await bus.provision();
    await bus.provision();
    for (const kind of streamKinds) {
      const info = await bus.jsm.streams.info(streamName(bus.namespace, kind));
      expect(info.config.num_replicas).toBe(1);
    }
  });
});
