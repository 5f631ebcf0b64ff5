// The bus refuses what nobody was given, on a real authenticated nats-server configured from
// @capstan/bus-auth: no anonymous clients; another system publishes only below its own ext source
// and reads neither commands nor streams; a service publishes only what it owns and reads only
// through its own consumers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { createTestBus, type TestBus } from '@capstan/test/infra';
import { connectBus, type Bus } from './bus.js';
import { newEvent } from '../envelope/envelope.js';
import { syncRequest } from '../catalog/sync.js';

const request = (operationId: string) =>
  newEvent(
    syncRequest.type,
    { operationId, application: { name: 'guestbook', namespace: 'argocd' }, dryRun: false, prune: true },
    { subject: 'applications/argocd/guestbook', actor: 'user:admin', source: 'capstan/api' },
  );

describe('bus permissions', () => {
  let tbus: TestBus;
  let api: Bus;
  let ext: NatsConnection;

  beforeAll(async () => {
    tbus = await createTestBus('perm');
    api = await connectBus({ ...tbus.connection('api'), service: 'api' });
    await api.provision();
    ext = await tbus.connect('ext-git');
  });
  afterAll(async () => {
    await ext?.close();
    await api?.close();
    await tbus?.cleanup();
  });

  it('refuses an anonymous connection', async () => {
    await expect(connect({ servers: tbus.url, reconnect: false })).rejects.toThrow(/authorization/i);
  });

  it('refuses a wrong password', async () => {
    await expect(
      connect({ servers: tbus.url, user: 'api', pass: 'not-the-password', reconnect: false }),
    ).rejects.toThrow(/authorization/i);
  });

  it('lets another system publish only below its own source, never a command or a domain event', async () => {
    const js = ext.jetstream();
    const ok = await js.publish(`${tbus.namespace}.ext.git.push`, '{}');
    expect(ok.stream).toBe(`${tbus.namespace}_EXT`.toUpperCase());
    for (const subject of [
      `${tbus.namespace}.cmd.sync.request`,
      `${tbus.namespace}.evt.sync.succeeded`,
      `${tbus.namespace}.evt.application.created`,
      `${tbus.namespace}.ext.ci.sync.request`,
      `${tbus.namespace}.dlq.sync-requests`,
    ]) {
      await expect(js.publish(subject, JSON.stringify(request('x'))), subject).rejects.toThrow(
        /permissions violation/i,
      );
    }
  });

  it('does not let another system read the command stream or manage streams and consumers', async () => {
    const stream = `${tbus.namespace}_CMD`.toUpperCase();
    for (const subject of [
      '$JS.API.INFO',
      '$JS.API.STREAM.NAMES',
      `$JS.API.STREAM.INFO.${stream}`,
      `$JS.API.STREAM.MSG.GET.${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.sync-requests`,
      `$JS.API.STREAM.DELETE.${stream}`,
    ]) {
      await expect(ext.request(subject, '{}', { timeout: 2000 }), subject).rejects.toThrow(
        /permissions violation/i,
      );
    }
    // Nor listen to commands with a plain subscription (refused asynchronously: it receives nothing).
    const errors: string[] = [];
    const watcher = await tbus.connect('ext-git');
    void (async () => {
      for await (const s of watcher.status()) if (s.type === 'error') errors.push(String(s.data));
    })();
    const sub = watcher.subscribe(`${tbus.namespace}.cmd.>`);
    await watcher.flush();
    await api.publish(request('unseen'));
    await new Promise((r) => setTimeout(r, 300));
    expect(sub.getReceived()).toBe(0);
    await watcher.close();
  });

  it('lets only the api publish the sync command', async () => {
    expect((await api.publish(request('from-api'))).seq).toBeGreaterThan(0);
    for (const user of ['sync', 'repo', 'appset'] as const) {
      const bus = await connectBus({ ...tbus.connection(user), service: user });
      try {
        await expect(bus.publish(request(`from-${user}`)), user).rejects.toThrow(/permissions violation/i);
      } finally {
        await bus.close();
      }
    }
  });

  it("does not let a service take over another service's consumer", async () => {
    const repo = await connectBus({ ...tbus.connection('repo'), service: 'repo' });
    try {
      await expect(
        repo.consume({ durable: 'sync-requests', events: [syncRequest], handle: async () => {} }),
      ).rejects.toThrow(/permissions violation/i);
    } finally {
      await repo.close();
    }
  });
});
