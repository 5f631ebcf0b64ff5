import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deployConfigPaths, renderDeployConfig } from './deploy-config.js';
import { busUsers, renderNatsConfig } from './nats-config.js';
import { extPermissions, servicePermissions } from './permissions.js';

describe('bus permissions', () => {
  it('confine an external system to its own ext subjects and the domain events', () => {
    expect(extPermissions('ci', 'capstan')).toEqual({
      publish: ['capstan.ext.ci.>'],
      subscribe: ['capstan.evt.>', '_INBOX_ext-ci.>'],
    });
  });

  it('let only the api publish commands, and pin stream and consumer names in a named namespace', () => {
    for (const u of ['sync', 'repo', 'appset'] as const)
      expect(servicePermissions(u, 'capstan').publish.filter((s) => s.includes('.cmd.'))).toEqual([]);
    const api = servicePermissions('api', 'capstan');
    expect(api.publish).toContain('capstan.cmd.sync.>');
    expect(api.publish).toContain('$JS.API.CONSUMER.MSG.NEXT.CAPSTAN_EVT.api-sync-status');
    expect(api.publish.some((s) => s.includes('*') || s === '>')).toBe(false);
    expect(api.subscribe).toEqual(['_INBOX_api.>']);
  });

  it('refuses an external source that is not a subject token', () => {
    expect(() => busUsers({ namespace: 'capstan', extSources: ['a.b'] })).toThrow(/external source/);
    expect(() => busUsers({ namespace: 'capstan', extSources: ['>'] })).toThrow(/external source/);
  });

  it('renders passwords as quoted literals or as environment variables', () => {
    const users = busUsers({ namespace: 'capstan', extSources: [] });
    const text = renderNatsConfig({
      host: '127.0.0.1',
      port: 1,
      storeDir: '/d',
      users,
      password: (u) => (u === 'api' ? 'p"w' : { env: 'X' }),
    });
    expect(text).toContain('user: "api", password: "p\\"w"');
    expect(text).toContain('user: "sync", password: $X');
  });

  it('keeps deploy/nats/nats-server.conf generated from the table (npm run gen:deploy -w @capstan/bus-auth)', () => {
    for (const path of deployConfigPaths) expect(readFileSync(path, 'utf8'), path).toBe(renderDeployConfig());
  });
});
