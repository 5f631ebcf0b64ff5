// The sync service as a process of its own, for tests that kill it (SIGKILL) mid-sync (the lease
// takeover test, the fault suite in test/faults): the real service (settings from the environment,
// as in production) with the test's stand-ins for the api and repo ports: every cluster is reached
// at its URL with SYNC_PROCESS_KUBE_TOKEN and the CA in SYNC_PROCESS_KUBE_CA_FILE when given, else
// without credentials (`insecure`); manifests are one ConfigMap named after the Application;
// control-plane objects are reported delivered. Run with `node --import tsx sync-process.ts` (one
// process: a SIGKILL leaves nothing behind).
import { readFileSync } from 'node:fs';
import { startService } from '@capstan/service';
import { syncSettings } from '../settings.js';
import { startSync } from '../sync-service.js';
import type { ManifestSource } from '../manifests/manifest-source.js';
import type { DeliveredObjects } from '../delivery/api-delivery.js';

const manifests: ManifestSource = {
  async render(app, request) {
    return {
      revision: request.revision ?? 'a'.repeat(40),
      objects: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${app.metadata.name}` },
          data: { k: 'v' },
        },
      ],
    };
  },
};
const delivery: DeliveredObjects = {
  async deliver(request) {
    return { applied: true, results: request.objects.map(() => ({}) as never) };
  },
};

const token = process.env.SYNC_PROCESS_KUBE_TOKEN;
const ca = process.env.SYNC_PROCESS_KUBE_CA_FILE
  ? readFileSync(process.env.SYNC_PROCESS_KUBE_CA_FILE, 'utf8')
  : '';

await startService({
  name: 'sync',
  settings: syncSettings,
  sources: { argv: process.argv.slice(2), env: process.env },
  start: async (ctx) => {
    await startSync(ctx, {
      credentials: {
        get: async (ref) =>
          token
            ? { name: ref.name, server: ref.server, bearerToken: token, caData: ca }
            : { name: ref.name, server: ref.server, insecure: true },
      },
      manifests,
      delivery,
    });
  },
});
