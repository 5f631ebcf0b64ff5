// The appset service follows Argo CD objects applied through the api (real PostgreSQL and NATS): an
// io.capstan.settings.changed.v1 with argocd-cmd-params-cm's applicationsetcontroller.log.level sets
// the running service's log level at once, and `capstan admin settings` (its Settings answer) shows
// the level in force with the applied source; taking the key out restores the start-up level.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, newEvent, settingsChanged, type Bus } from '@capstan/events';
import { startHarness, type Harness } from '../test-support/harness.js';

describe('appset: applied settings', () => {
  let h: Harness;
  let bus: Bus;
  const applyParams = async (version: number, data: Record<string, string>) => {
    const event = newEvent(
      settingsChanged.type,
      {
        object: 'argocd-cmd-params-cm' as const,
        version,
        data,
        sensitiveKeys: [],
        changedKeys: ['applicationsetcontroller.log.level'],
      },
      { source: 'capstan/api', subject: 'settings/argocd-cmd-params-cm', actor: 'user:admin' },
    );
    await bus.publish(event);
  };

  beforeAll(async () => {
    // No CAPSTAN_LOG_LEVEL: the level is not pinned, the start-up value is the default (info).
    h = await startHarness({ CAPSTAN_LOG_LEVEL: '' });
    bus = await connectBus({ ...h.tbus.connection('api'), service: 'api' });
  }, 120_000);
  afterAll(async () => {
    await bus?.close();
    await h?.stop();
  });

  it('takes applicationsetcontroller.log.level live, and goes back when the key goes', async () => {
    const logger = (h.service.context as unknown as { logger: { level: string } }).logger;
    expect(logger.level).toBe('info');
    await applyParams(1, { 'applicationsetcontroller.log.level': 'debug' });
    await expect.poll(() => logger.level, { timeout: 10_000 }).toBe('debug');
    const db = new pg.Client({ connectionString: h.tdb.url });
    await db.connect();
    try {
      const rows = await db.query('select object, version from appset.applied_settings');
      expect(rows.rows).toEqual([{ object: 'argocd-cmd-params-cm', version: 1 }]);
    } finally {
      await db.end();
    }
    await applyParams(2, {});
    await expect.poll(() => logger.level, { timeout: 10_000 }).toBe('info');
  });
});
