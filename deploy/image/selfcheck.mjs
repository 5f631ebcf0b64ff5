// The image's self-check: bundled with the services (deploy/image/bundle.mjs, entry `selfcheck`, so it
// shares their chunks and their rewritten module locations) and run by deploy/Dockerfile on the
// finished file system. It loads, through the services' own code, every file they find on disk at
// run time and makes each do its work once: the ApplicationSet/notifications Go template module
// (WebAssembly), jq (ignoreDifferences jqPathExpressions), Lua (custom health checks), the
// engine digest and the web UI. A missing or misplaced file fails the image build, not a tenant's
// request later. Also: `docker run --rm --entrypoint node IMAGE /app/dist/services/selfcheck.mjs`.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AppSetEngine, engineIdentity } from '@capstan/appset-engine';
import { compareResource, compileIgnoreDifferences } from '@capstan/diff';
import { createHealthAssessor } from '@capstan/health';
import { defaultUiDir } from '../../services/api/dist/transport/ui-assets.js';

// The modules' workers do not hold the process open (a service's servers do): this timer does.
const alive = setInterval(() => {}, 1000);
const checks = [];
const check = (ok, what) => {
  if (!ok) throw new Error(`image self-check failed: ${what}`);
  checks.push(what);
};

const engine = await AppSetEngine.load();
await engine.close();
check(true, 'Go template module (appset.wasm) loaded and started');
check(/^[0-9a-f]{64}$/.test(await engineIdentity()), 'ApplicationSet engine digest');

const deployment = (image) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { template: { spec: { containers: [{ name: 'web', image }] } } },
});
const ignore = await compileIgnoreDifferences([
  { group: 'apps', kind: 'Deployment', jqPathExpressions: ['.spec.template.spec.containers[] | .image'] },
]);
const comparison = compareResource(deployment('nginx:1'), deployment('nginx:2'), {
  fieldManager: 'capstan',
  ignore,
});
check(comparison.status === 'Synced', 'jq (jq-wasm) ran an ignoreDifferences expression');

const assessor = await createHealthAssessor({
  customizations: [
    {
      group: 'example.com',
      kind: 'Thing',
      lua: 'hs = {}\nhs.status = "Degraded"\nhs.message = "lua ran"\nreturn hs',
    },
  ],
});
const health = assessor.assess({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'x' } });
check(
  health?.status === 'Degraded' && health.message === 'lua ran',
  'Lua (wasmoon) ran a custom health check',
);

check(existsSync(join(defaultUiDir(), 'index.html')), `web UI at ${defaultUiDir()}`);
clearInterval(alive);
process.stdout.write(`image self-check passed: ${checks.join('; ')}\n`);
process.exit(0);
