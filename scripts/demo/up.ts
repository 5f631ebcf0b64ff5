// `npm run up`, after scripts/up.sh has installed, started PostgreSQL, obtained the
// Kubernetes binaries and kustomize, and built: starts the stack in the background, runs the
// guestbook story with the capstan CLI, and leaves everything running.
//
// A second run restarts cleanly: it stops what the previous run started, resets the demo's
// database and bus namespace, and starts again (the admin password and keys are kept).
import { mkdirSync } from 'node:fs';
import { resetBus, resetDatabase } from './installation.js';
import {
  assertPortsFree,
  serviceEnvironments,
  servicePki,
  startGit,
  startKube,
  startNats,
  startDex,
  startRegistry,
  startService,
} from './launch.js';
import { detail, done, heading, step } from './progress.js';
import { loadOrCreateSecrets } from './secrets.js';
import { addonSet } from './appset-story.js';
import { bannerApp } from './charts-story.js';
import { selfService } from './self-service-story.js';
import { runStory } from './story.js';
import { installation, paths, ports, story } from './stack.js';
import { removeState, stopStack } from './teardown.js';

async function main(): Promise<void> {
  step('stop what a previous npm run up started');
  const stopped = await stopStack();
  removeState([paths.secrets]);
  mkdirSync(paths.logs, { recursive: true });
  done(stopped.length ? `(stopped ${stopped.join(', ')})` : '(nothing was running)');

  step('check the loopback ports and generate the secrets');
  await assertPortsFree();
  const { secrets, reused } = loadOrCreateSecrets();
  detail(
    `${reused ? 'reused' : 'generated'} ${paths.secrets} (mode 600): keys, service tokens, admin and git passwords`,
  );
  done();

  step(`start nats-server with the bus users and permissions on 127.0.0.1:${ports.nats}`);
  const nats = await startNats(secrets);
  detail(`nats (pid ${nats.pid}, config ${paths.nats}/nats.conf, log ${nats.log})`);
  done();

  step(`reset database ${installation.database} and bus namespace ${installation.busNamespace}`);
  await resetDatabase();
  const streams = await resetBus(secrets);
  done(streams ? `(deleted ${streams} streams of the previous run)` : '');

  step(
    'start a Kubernetes API server (kube-apiserver + etcd), the git server, an OCI registry and an OIDC provider (Dex)',
  );
  const [{ cluster }, { git }, registry, dex] = await Promise.all([
    startKube(),
    startGit(secrets),
    startRegistry(),
    startDex(secrets),
  ]);
  detail(`cluster ${cluster.name}: ${cluster.server} (admin kubeconfig: ${cluster.adminKubeconfig})`);
  for (const r of git.repositories)
    detail(`git: ${r.url} at ${r.sha.slice(0, 12)} (basic auth: ${story.gitUsername})`);
  detail(`OCI registry: ${registry.url} (CNCF Distribution, no users, loopback only)`);
  detail(`OIDC provider: ${dex.issuer} (Dex, one password user: ${story.ssoUser.email})`);
  done();

  step('start repo, api, sync (impersonation on) and appset; wait for each /readyz');
  const env = serviceEnvironments(secrets, await servicePki());
  await Promise.all(
    (['repo', 'api', 'sync', 'appset'] as const).map(async (name) => {
      const record = await startService(name, env[name]);
      detail(
        `${name.padEnd(6)} ready (pid ${record.pid}, http://127.0.0.1:${ports.ops[name]}/readyz, log ${record.log})`,
      );
    }),
  );
  done();

  await runStory({ cluster, git, secrets, dexIssuer: dex.issuer });

  heading('The stack keeps running');
  const lines = [
    // The login, not the password: it stays in the mode-600 secrets file, out of terminals' scrollback and logs.
    `Web UI: http://127.0.0.1:${ports.apiHttp}  (user admin; password: node -p 'require("./.capstan/secrets.json").adminPassword')`,
    `  open ${story.application} for its resource tree, Sync, its Identity panel, and Audit for the trail (docs/ui.md)`,
    `Explore (the CLI context '${installation.context}' is logged in as admin):`,
    `  npx capstan app get ${story.application}`,
    `  npx capstan app history ${story.application}`,
    `  npx capstan proj get ${story.project}`,
    `  npx capstan appset get ${addonSet.name}`,
    `  npx capstan app get ${bannerApp.name}   (chart from the OCI registry, values from git)`,
    `  npx capstan app get ${selfService.application}`,
    `  npx capstan proj get ${selfService.delivered}`,
    `  npx capstan audit query sync --app ${story.application}`,
    `  npx capstan audit query credentials --project ${story.project}`,
    `  npx capstan audit query sync --outcome deny`,
    `  npx capstan audit verify`,
    `  psql -h 127.0.0.1 -U postgres ${installation.database} -c 'select * from audit.sync_history'`,
    `  psql -h 127.0.0.1 -U postgres ${installation.database} -c 'select * from audit.credential_usage'`,
    `  psql -h 127.0.0.1 -U postgres ${installation.database} -c 'select * from audit.denials'`,
    `  kubectl --kubeconfig ${cluster.adminKubeconfig} -n ${story.namespace} get cm,svc,deploy`,
    `  HTTP/JSON API: http://127.0.0.1:${ports.apiHttp} (gRPC: ${installation.apiAddress})`,
    `Log in again: node -p 'require("./.capstan/secrets.json").adminPassword' | npx capstan login ${installation.apiAddress} --server-crt .capstan/pki/ca.crt --password-stdin` +
      ' (later commands: export CAPSTAN_SERVER_CRT=.capstan/pki/ca.crt)',
    `Single sign-on: the web UI's "Log in with Dex", or npx capstan login ${installation.apiAddress} --sso --name ${story.ssoUser.username}` +
      ` (${story.ssoUser.email}; password: node -p 'require("./.capstan/secrets.json").ssoPassword')`,
    `Logs: ${paths.logs}/{kube,git,registry,dex,repo,api,sync,appset}.log`,
    'Stop: npm run down   (stops everything started here and removes .capstan/ except the logs)',
  ];
  for (const l of lines) console.log(l);
}

main().catch((err: unknown) => {
  console.error(`\ncapstan up: failed: ${err instanceof Error ? err.message : String(err)}`);
  console.error(`Logs are in ${paths.logs}. What did start keeps running: npm run down stops it.`);
  process.exit(1);
});
