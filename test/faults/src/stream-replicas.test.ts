// The bus on a three-node NATS JetStream cluster (nats-cluster.ts) with setting bus.stream-replicas:
// streams first provisioned with one replica are scaled to three when the services start with 3 (the
// upgrade path of deploy/k8s-ha), every stream then has a replica on each node, and with one node
// killed the streams still take events (two of three replicas are a quorum).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { streamKinds, streamName, type StreamKind } from '@capstan/bus-auth';
import { connectBus, type Bus } from '@capstan/events';
import { startNatsCluster, type NatsCluster } from './nats-cluster.js';

describe('bus.stream-replicas on a three-node NATS cluster', () => {
  let cluster: NatsCluster;
  let bus: Bus;

  beforeAll(async () => {
    cluster = await startNatsCluster(`replicas_${randomUUID().slice(0, 8)}`);
    bus = await connectBus({ ...cluster.connection('admin'), service: 'test', streamReplicas: 1 });
  }, 120_000);
  afterAll(async () => {
    await bus?.close();
    await cluster?.stop();
  });

  const replicasOf = async (kind: StreamKind) => {
    const info = await bus.jsm.streams.info(streamName(bus.namespace, kind));
    return { configured: info.config.num_replicas, placed: 1 + (info.cluster?.replicas?.length ?? 0) };
  };

  it('scales streams created with one replica to three, one on each node', async () => {
    await bus.provision();
    for (const kind of streamKinds) expect(await replicasOf(kind)).toEqual({ configured: 1, placed: 1 });

    // The services restarted with bus.stream-replicas=3 (as deploy/k8s-ha sets it).
    const scaled = await connectBus({ ...cluster.connection('admin'), service: 'test', streamReplicas: 3 });
    try {
      await scaled.provision();
    } finally {
      await scaled.close();
    }
    // JetStream places the new replicas asynchronously: wait (bounded) until each stream has all three.
    const all = async () => Promise.all(streamKinds.map((kind) => replicasOf(kind)));
    let replicas = await all();
    for (let i = 0; i < 150 && replicas.some((r) => r.placed < 3); i++) {
      await new Promise((r) => setTimeout(r, 200));
      replicas = await all();
    }
    expect(replicas).toEqual(streamKinds.map(() => ({ configured: 3, placed: 3 })));
  }, 60_000);

  it('keeps taking events with one node killed', async () => {
    await cluster.kill(2);
    const subject = `${bus.namespace}.evt.replicas-check`;
    let ack: { seq: number } | undefined;
    // The stream's leader may have been on the killed node: JetStream elects another within seconds.
    for (let i = 0; i < 50 && !ack; i++) {
      ack = await bus.js.publish(subject, 'x', { msgID: randomUUID() }).catch(() => undefined);
      if (!ack) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ack?.seq).toBeGreaterThan(0);
  }, 60_000);
});
