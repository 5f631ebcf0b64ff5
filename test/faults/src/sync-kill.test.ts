// Fault scenario: the sync service killed with SIGKILL at random points during a stream of syncs,
// FAULTS_CYCLES times (5 in npm test, 100 in `npm run faults`), and restarted (sync-stage.ts: own
// PostgreSQL, own three-node NATS cluster, a real kube-apiserver). Every requested sync ends exactly
// once; recovery is the time from the kill until every sync the dead process held is claimed again
// (restart included). Figures: bench/results/faults-sync-kill.json.
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

describe('fault: the sync service killed with SIGKILL during a stream of syncs', () => {
  let stage: SyncStage;
  beforeAll(async () => void (stage = await startSyncStage()), 600_000);
  afterAll(async () => stage?.stop());

  it(`given ${CYCLES} SIGKILLs at random points of a stream of syncs, then every sync ends exactly once and nothing is lost`, async () => {
    const recoveryMs: number[] = [];
    let interrupted = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await stage.requestRound();
      // The kill comes while syncs run (each takes a fraction of a second), at a random point.
      let running = await stage.running();
      for (let i = 0; i < 100 && running.length === 0; i++) {
        await sleep(20);
        running = await stage.running();
      }
      await sleep(Math.floor(Math.random() * 150));
      running = await stage.running();
      await stage.killSync();
      const killedAt = Date.now();
      await stage.startSync();
      if (running.length === 0) continue;
      interrupted += running.length;
      await stage.takenOver(running, LEASE_MS * 6);
      recoveryMs.push(Date.now() - killedAt);
    }
    const figures = await stage.verify('sync-kill', {
      syncsInterruptedByKill: interrupted,
      recoveryMs: {
        p50: percentile(recoveryMs, 50),
        p99: percentile(recoveryMs, 99),
        samples: recoveryMs.length,
      },
    });
    expect(outcomeOf(figures)).toEqual(exactlyOnce(stage.requested.length));
  }, 3_600_000);
});
