// Reads back every message of a test bus namespace's JetStream streams (evt, cmd, ext, dlq), for
// tests that must prove what did or did not travel on the bus.
import { AckPolicy, DeliverPolicy } from 'nats';
import type { TestBus } from '@capstan/test/infra';

export async function readNamespaceMessages(bus: TestBus): Promise<string[]> {
  const nc = await bus.connect('admin');
  const texts: string[] = [];
  try {
    const jsm = await nc.jetstreamManager();
    for await (const info of jsm.streams.list()) {
      if (!info.config.name.toLowerCase().startsWith(`${bus.namespace}_`)) continue;
      const total = info.state.messages;
      if (total === 0) continue;
      const consumer = await jsm.consumers.add(info.config.name, {
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.All,
      });
      const messages = await (
        await nc.jetstream().consumers.get(info.config.name, consumer.name)
      ).fetch({
        max_messages: total,
        expires: 5_000,
      });
      for await (const m of messages) {
        texts.push(m.string());
        if (m.info.pending === 0) break;
      }
      await jsm.consumers.delete(info.config.name, consumer.name);
    }
  } finally {
    await nc.close();
  }
  return texts;
}
