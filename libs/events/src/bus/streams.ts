// Streams and subjects. Everything lives below a namespace (default `capstan`) so that installations,
// and tests, can share one NATS server without seeing each other.
import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from 'nats';
import { streamKinds, streamName, type StreamKind } from '@capstan/bus-auth';

export { deadLetterSubject, streamKinds, streamName, type StreamKind } from '@capstan/bus-auth';

export function streamOfSubject(namespace: string, subject: string): string {
  const kind = subject.slice(namespace.length + 1).split('.')[0] as StreamKind;
  if (!streamKinds.includes(kind)) throw new Error(`subject ${subject} is not in a capstan stream`);
  return streamName(namespace, kind);
}

// The duplicate window bounds how long Nats-Msg-Id de-duplication remembers an id; consumers are
// idempotent beyond it, so a relay restarted later still causes no duplicate effect.
const DUPLICATE_WINDOW_NS = 10 * 60 * 1e9;

function configFor(namespace: string, kind: StreamKind, replicas: number): Partial<StreamConfig> {
  return {
    name: streamName(namespace, kind),
    num_replicas: replicas,
    subjects: [`${namespace}.${kind}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    duplicate_window: DUPLICATE_WINDOW_NS,
    max_age: kind === 'dlq' ? 30 * 24 * 3600 * 1e9 : 7 * 24 * 3600 * 1e9,
  };
}

/**
 * Creates the streams, or brings their configuration up to date; safe to run from every replica.
 * `replicas` (setting bus.stream-replicas) is each stream's JetStream replica count: an existing
 * stream is scaled to it (JetStream moves the data), and a count the NATS deployment cannot hold
 * (more than its nodes, or >1 without a cluster) fails start-up with NATS's reason.
 */
export async function provisionStreams(
  jsm: JetStreamManager,
  namespace: string,
  replicas = 1,
): Promise<void> {
  for (const kind of streamKinds) {
    const config = configFor(namespace, kind, replicas);
    try {
      await provisionStream(jsm, config);
    } catch (err) {
      throw new Error(
        `cannot provision JetStream stream ${config.name} with ${replicas} replica(s) (bus.stream-replicas): ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

async function provisionStream(jsm: JetStreamManager, config: Partial<StreamConfig>): Promise<void> {
  try {
    await jsm.streams.info(config.name!);
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    try {
      await jsm.streams.add(config);
      return;
    } catch (addErr) {
      // Another replica created it between our look and our add.
      if (!/already in use|already exists/i.test((addErr as Error).message)) throw addErr;
    }
  }
  await jsm.streams.update(config.name!, config);
}
