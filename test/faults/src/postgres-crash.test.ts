// Fault scenario: PostgreSQL killed with SIGKILL (a crash: recovery on restart) in the middle of a
// stream of syncs, down for a few seconds, then started again, FAULTS_CYCLES times (sync-stage.ts).
// It found that the crash killed the sync service: a pooled client checked out between two queries
// had no 'error' listener (fixed in @capstan/db createDb); and that sync requests published around a
// crash could be dead-lettered, their five deliveries spent while the database was away (fixed: a
// database outage is retried up to OUTAGE_MAX_DELIVER times in @capstan/events' settlement).
// The sync service keeps running through it: its syncs fail over to a retry (their lease runs out
// while the database is away) and every requested sync still ends exactly once. Recovery is the time
// from the database's return until every sync running at the crash was claimed again or ended.
// Figures: bench/results/faults-postgres-crash.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CYCLES,
  LEASE_MS,
  exactlyOnce,
  outcomeOf,
  percentile,
  sleep,
  startSyncStage,
  type SyncStage,
} from './sync-stage.js';

const DOWN_MS = 3_000;

describe('fault: PostgreSQL crashed and restarted during a stream of syncs', () => {
  let stage: SyncStage;
  beforeAll(async () => void (stage = await startSyncStage()), 600_000);
  afterAll(async () => stage?.stop());

  it(`given ${CYCLES} database crashes mid-sync, then every sync ends exactly once and the service recovers by itself`, async () => {
    const recoveryMs: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await stage.requestRound();
      // The crash comes while syncs run (they take a fraction of a second each).
      let running = await stage.running();
      for (let i = 0; i < 100 && running.length === 0; i++) {
        await sleep(20);
        running = await stage.running();
      }
      await sleep(Math.floor(Math.random() * 100));
      await stage.pg.kill();
      await sleep(DOWN_MS);
      await stage.pg.start();
      const backAt = Date.now();
      if (running.length === 0) continue;
      await stage.takenOver(running, LEASE_MS * 12).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${stage.output().slice(-6_000)}`);
      });
      recoveryMs.push(Date.now() - backAt);
    }
    const figures = await stage.verify('postgres-crash', {
      downMs: DOWN_MS,
      recoveryMs: {
        p50: percentile(recoveryMs, 50),
        p99: percentile(recoveryMs, 99),
        samples: recoveryMs.length,
      },
    });
    expect(outcomeOf(figures)).toEqual(exactlyOnce(stage.requested.length));
  }, 3_600_000);
});
