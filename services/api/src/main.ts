// The api service: configuration, then startApi. Start it with `node services/api/dist/main.js`
// (flags, CAPSTAN_* environment variables or --config file; see README).
import { runService } from '@capstan/service';
import { apiSettings } from './config.js';
import { startApi } from './api.js';

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

await runService({
  name: 'api',
  settings: apiSettings,
  start: async (ctx) => {
    const c = ctx.config;
    const api = await startApi(
      {
        databaseUrl: c['database.url'],
        natsUrl: c['nats.url'],
        busNamespace: c['bus.namespace'],
        grpcHost: c['grpc.host'],
        grpcPort: c['grpc.port'],
        httpHost: c['api.http.host'],
        httpPort: c['api.http.port'],
        bodyLimit: c['api.body-limit'],
        policyFile: c['rbac.policy-file'],
        policyCsv: c['rbac.policy-csv'],
        defaultRole: c['rbac.default-role'],
        sessionTtlSeconds: c['auth.session-ttl-seconds'],
        signingKey: c['auth.signing-key'],
        adminPassword: c['auth.admin-password'],
        serviceTokens: c['auth.service-tokens'],
        credentialReaders: list(c['auth.credential-readers']),
        delegatingServices: list(c['auth.delegating-services']),
        encryptionKeys: c['encryption.keys'],
        encryptionKeyFile: c['encryption.key-file'],
        repoAddress: c['repo.address'],
        repoServiceToken: c['repo.service-token'],
        metrics: ctx.metrics,
        rebuildProjections: c['projections.rebuild'],
      },
      ctx.logger,
      ctx.onShutdown,
    );
    ctx.addReadinessCheck('database', async () => {
      await api.services.db.selectNoFrom((eb) => eb.val(1).as('one')).execute();
      return true;
    });
  },
});
