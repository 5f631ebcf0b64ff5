// The image's entrypoint (after tini): starts the Capstan service named by SERVICE (api, repo, sync
// or appset) in this very process, so no shell is needed at run time and node receives the signals
// tini forwards. Arguments go to the service (`--migrate-only`, `--help`): process.argv keeps the
// shape [node, script, ...args] the services parse. The api's larger young generation
// (--max-semi-space-size=64, as its npm start) is a V8 heap setting fixed at start: the image's api
// target sets it through NODE_OPTIONS, and deployments of the generic image set it there too.
const services = new Set(['api', 'repo', 'sync', 'appset']);
const service = process.env.SERVICE ?? '';
if (!services.has(service)) {
  process.stderr.write(`capstan: set SERVICE to api, repo, sync or appset (got '${service}')\n`);
  process.exit(64);
}
// The services as deploy/image/bundle.mjs bundles them.
await import(`/app/dist/services/${service}.mjs`);
