// The demo installation's durable state outside .capstan/: its own PostgreSQL database and its
// own bus namespace on Capstan's own (authenticated) nats-server. `npm run up` starts from a clean slate every time (the Kubernetes API
// server and the git server it starts are new too, so state from a previous run would point at
// servers that no longer exist); `npm run down` leaves both for inspection until the next `up`.
import { connect } from 'nats';
import pg from 'pg';
import { inboxPrefixOf } from '@capstan/bus-auth';
import type { StackSecrets } from './secrets.js';
import { installation } from './stack.js';

export async function resetDatabase(): Promise<void> {
  const admin = new pg.Client({
    connectionString: installation.databaseUrl.replace(/\/[^/]+$/, '/postgres'),
  });
  await admin.connect();
  try {
    const name = pg.escapeIdentifier(installation.database);
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
}

/** Deletes the streams (and with them the consumers) of the demo's bus namespace; returns how many. */
export async function resetBus(secrets: StackSecrets): Promise<number> {
  const nc = await connect({
    servers: installation.natsUrl,
    user: 'admin',
    pass: secrets.natsPasswords.admin!,
    inboxPrefix: inboxPrefixOf('admin'),
  });
  try {
    const jsm = await nc.jetstreamManager();
    const prefix = `${installation.busNamespace}_`.toUpperCase();
    let deleted = 0;
    for await (const s of jsm.streams.list()) {
      if (s.config.name.toUpperCase().startsWith(prefix)) {
        await jsm.streams.delete(s.config.name);
        deleted++;
      }
    }
    return deleted;
  } finally {
    await nc.close();
  }
}
