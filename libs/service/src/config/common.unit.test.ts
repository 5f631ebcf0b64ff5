// Settings every service shares, as the loader reads them.
import { describe, expect, it } from 'vitest';
import { commonSettings } from './common.js';
import { loadConfig } from './settings.js';

describe('bus.stream-replicas', () => {
  const load = (env: Record<string, string>) => loadConfig(commonSettings, { argv: [], env });

  it('is 1 unless set, and read from CAPSTAN_BUS_STREAM_REPLICAS', () => {
    expect(load({})['bus.stream-replicas']).toBe(1);
    expect(load({ CAPSTAN_BUS_STREAM_REPLICAS: '3' })['bus.stream-replicas']).toBe(3);
    expect(
      loadConfig(commonSettings, { argv: ['--bus-stream-replicas', '5'], env: {} })['bus.stream-replicas'],
    ).toBe(5);
  });

  it('refuses what JetStream cannot hold, naming the setting (1 to 5 replicas)', () => {
    for (const bad of ['0', '6', '2.5', 'three'])
      expect(() => load({ CAPSTAN_BUS_STREAM_REPLICAS: bad }), bad).toThrow(/bus\.stream-replicas/);
  });
});
