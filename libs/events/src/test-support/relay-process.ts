// A relay in its own process, so a test can SIGKILL it at an arbitrary point mid-batch.
import { createDb } from '@capstan/db';
import { connectBus } from '../bus/bus.js';
import { startOutboxRelay } from '../outbox/relay.js';
import { testCatalog } from './counter.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';

const [databaseUrl, natsUrl, namespace] = process.argv.slice(2) as [string, string, string];
const db = createDb<EventStoreDatabase>(databaseUrl);
// The bus user and password come by environment (never argv).
const bus = await connectBus({
  url: natsUrl,
  service: 'relay-test',
  namespace,
  catalog: testCatalog,
  user: process.env.NATS_USER ?? '',
  password: process.env.NATS_PASSWORD ?? '',
});
let told = false;
await startOutboxRelay({
  db,
  databaseUrl,
  schema: 'svc',
  bus,
  batchSize: 7,
  afterPublish: async () => {
    // Tell the parent we are mid-flight, then dawdle so the kill lands between publish and delete.
    if (!told) {
      told = true;
      process.send?.('publishing');
    }
    await new Promise((r) => setTimeout(r, 50));
  },
});
