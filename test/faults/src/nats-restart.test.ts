// Fault scenario: the bus itself fails while syncs run (sync-stage.ts on the suite's three-node NATS
// JetStream cluster, every stream with three replicas and the services given every node, as
// deploy/k8s-ha runs them). First one node is killed with SIGKILL mid-sync and restarted after a few
// seconds, FAULTS_CYCLES times, a different node each cycle (so the leaders of the streams and of the
// consumers move); then the whole cluster is killed at once and started again. Every requested sync
// ends exactly once. Recovery is the time from the kill until every sync of that round has ended.
// Figures: bench/results/faults-nats-node-kill.json, faults-nats-cluster-restart.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CYCLES,
  exactlyOnce,
  outcomeOf,
  percentile,
  sleep,
  startSyncStage,
  waitUntil,
  type SyncStage,
} from './sync-stage.js';

const DOWN_MS = 2_000;

describe('fault: NATS nodes killed during a stream of syncs (replicated streams)', () => {
  let stage: SyncStage;
  beforeAll(async () => void (stage = await startSyncStage({ streamReplicas: 3 })), 600_000);
  afterAll(async () => stage?.stop());

  /** Requests a round, waits until its syncs run, then a random moment more. */
  async function roundUnderWay(): Promise<string[]> {
    const before = stage.requested.length;
    await stage.requestRound();
    for (let i = 0; i < 100 && (await stage.running()).length === 0; i++) await sleep(20);
    await sleep(Math.floor(Math.random() * 100));
    return stage.requested.slice(before);
  }

  /** Milliseconds from `since` until every sync of `round` has ended. */
  async function roundEnded(round: string[], since: number): Promise<number> {
    await waitUntil(
      'the round to end',
      async () => (await stage.ended(round)) === round.length,
      120_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${stage.output().slice(-6_000)}`);
    });
    return Date.now() - since;
  }

  it(`given ${CYCLES} nodes killed and restarted mid-sync, then every sync ends exactly once`, async () => {
    const recoveryMs: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const round = await roundUnderWay();
      const node = cycle % stage.nats.size;
      const killedAt = Date.now();
      await stage.nats.kill(node);
      await sleep(DOWN_MS);
      await stage.nats.start(node);
      await stage.nats.ready(node);
      recoveryMs.push(await roundEnded(round, killedAt));
    }
    const figures = await stage.verify('nats-node-kill', {
      downMs: DOWN_MS,
      streamReplicas: 3,
      roundEndedAfterKillMs: {
        p50: percentile(recoveryMs, 50),
        p99: percentile(recoveryMs, 99),
        samples: recoveryMs.length,
      },
    });
    expect(outcomeOf(figures)).toEqual(exactlyOnce(stage.requested.length));
  }, 3_600_000);

  it('given the whole cluster killed mid-sync and started again, then every sync ends exactly once', async () => {
    const round = await roundUnderWay();
    const killedAt = Date.now();
    for (let i = 0; i < stage.nats.size; i++) await stage.nats.kill(i);
    await sleep(DOWN_MS);
    for (let i = 0; i < stage.nats.size; i++) await stage.nats.start(i);
    for (let i = 0; i < stage.nats.size; i++) await stage.nats.ready(i);
    const endedMs = await roundEnded(round, killedAt);
    // And the bus takes new work afterwards.
    const after = await roundUnderWay();
    await roundEnded(after, Date.now());
    const figures = await stage.verify('nats-cluster-restart', {
      downMs: DOWN_MS,
      streamReplicas: 3,
      roundEndedAfterKillMs: endedMs,
    });
    expect(outcomeOf(figures)).toEqual(exactlyOnce(stage.requested.length));
  }, 600_000);
});
