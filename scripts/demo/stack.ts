// Where the local stack of `npm run up` lives: every path under .capstan/ in the repository
// (gitignored), the fixed loopback ports of the services, and the installation's names.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const state = path.join(repoRoot, '.capstan');

export const paths = {
  state,
  /** Kept by `npm run down`: everything else under .capstan/ is removed. */
  logs: path.join(state, 'logs'),
  run: path.join(state, 'run'),
  /** Generated keys, tokens and passwords (mode 600); passed to the services by environment. */
  secrets: path.join(state, 'secrets.json'),
  /** The internal CA and one certificate per service (keys mode 600), made by up.ts with openssl. */
  pki: path.join(state, 'pki'),
  kube: path.join(state, 'kube'),
  git: path.join(state, 'git'),
  repoCache: path.join(state, 'repo-cache'),
  /** nats-server's generated configuration (mode 600: it holds the bus passwords) and JetStream store. */
  nats: path.join(state, 'nats'),
  /** The OCI registry's configuration and storage (charts pushed by the story). */
  registry: path.join(state, 'registry'),
  /** Dex's generated configuration (mode 600: it holds the client secret and a password hash). */
  dex: path.join(state, 'dex'),
  /** The single sign-on user's own CLI configuration (the admin's context stays the current one). */
  ssoConfig: path.join(state, 'run', 'sso-cli-config'),
  demo: path.join(repoRoot, 'scripts/demo'),
};

/** Fixed ports, so that `capstan login 127.0.0.1:8083` and the printed commands always hold. */
export const ports = {
  apiGrpc: 8083,
  apiHttp: 8080,
  repoGrpc: 8091,
  appsetGrpc: 8092,
  syncGrpc: 8093,
  /** Capstan's own nats-server (authenticated; the machine's plain one on 4222 is not used). */
  nats: 4229,
  /** The OCI registry (CNCF Distribution) the Helm chart chapter pushes to; no users, loopback only. */
  registry: 8095,
  /** Dex, the OpenID Connect provider of the single sign-on chapter (issuer http://127.0.0.1:5556/dex). */
  dex: 5556,
  /** Where `capstan login --sso` receives the provider's redirect (the CLI's default port). */
  ssoCallback: 8085,
  ops: { api: 9180, repo: 9181, sync: 9182, appset: 9183 },
};

export const installation = {
  /** Its own database and bus namespace: the demo never touches the `capstan` database or tests. */
  database: 'capstan_demo',
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/capstan_demo',
  natsUrl: 'nats://127.0.0.1:4229',
  busNamespace: 'capstan_demo',
  /** The CLI context `npm run up` logs in to (in the user's ~/.config/capstan/config). */
  context: 'capstan-demo',
  apiAddress: `127.0.0.1:${ports.apiGrpc}`,
};

/** The story's names, in one place. */
export const story = {
  cluster: 'in-cluster',
  project: 'team-a',
  namespace: 'guestbook',
  serviceAccount: 'guestbook-deployer',
  application: 'guestbook',
  /** Aimed outside the project's destinations: the api refuses it when it is written. */
  refusedApplication: 'guestbook-kube-system',
  repository: 'guestbook.git',
  repositoryPath: 'guestbook',
  gitUsername: 'team-a-reader',
  /** The OCI registry's chart repository (the project may read it; charts-story.ts pushes to it). */
  chartRegistry: `oci://127.0.0.1:${ports.registry}/charts`,
  /** The single sign-on chapter's person: a Dex password user in the provider group team-a-devs. */
  ssoUser: { username: 'dana', email: 'dana@example.com', userID: 'dana-0001', groups: ['team-a-devs'] },
  /** The project role of team-a that the provider group is given (get and sync its Applications). */
  ssoRole: 'developer',
};

/** Start order; `down` stops in reverse. */
export const components = [
  'nats',
  'kube',
  'git',
  'registry',
  'dex',
  'repo',
  'api',
  'sync',
  'appset',
] as const;

/** The external systems of the demo: a git server announcing pushes may publish on ext.git.*. */
export const extSources = ['git'] as const;
