// The sync service's own setting schemas at their edges (values an operator or an applied argocd-cm
// gives them).
import { describe, expect, it } from 'vitest';
import { syncSettings } from './settings.js';

describe('reconcile.resync-ms', () => {
  const schema = syncSettings['reconcile.resync-ms'].schema;

  it("takes 0 as Argo CD's timeout.reconciliation 0: no periodic refresh", () => {
    expect(schema.safeParse(0)).toMatchObject({ success: true, data: 0 });
    expect(schema.safeParse('180000')).toMatchObject({ success: true, data: 180_000 });
  });

  it('refuses a period under a second, which would re-render every Application continuously', () => {
    const parsed = schema.safeParse(500);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('must be 0 (off) or at least 1000');
  });
});
