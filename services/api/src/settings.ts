// The api's settings (on top of every service's common ones). Secrets (keys, passwords, tokens)
// come from the environment or the configuration file only, never from flags.
import { booleanSetting, type Settings } from '@capstan/service';
import { z } from 'zod';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { tlsSettings } from '@capstan/service-identity';

// The git webhook (POST /api/webhook, docs/webhooks.md). The secrets are Argo CD's argocd-secret keys;
// an applied argocd-secret (kept sealed) sets them live unless the environment pins them.
const webhookSecret = (provider: string, env: string, what: string) => ({
  schema: z.string().default(''),
  default: '',
  secret: true,
  env,
  description: `${what} of ${provider} webhook deliveries (Argo CD's argocd-secret key of the same name); empty: such deliveries are refused unless webhook.allow-unsigned`,
});

export const webhookSettings = {
  'webhook.github.secret': webhookSecret('GitHub', 'CAPSTAN_WEBHOOK_GITHUB_SECRET', 'HMAC secret'),
  'webhook.gitlab.secret': webhookSecret('GitLab', 'CAPSTAN_WEBHOOK_GITLAB_SECRET', 'token (X-Gitlab-Token)'),
  'webhook.bitbucket.uuid': webhookSecret(
    'Bitbucket Cloud',
    'CAPSTAN_WEBHOOK_BITBUCKET_UUID',
    'hook UUID (X-Hook-UUID)',
  ),
  'webhook.bitbucketserver.secret': webhookSecret(
    'Bitbucket Server',
    'CAPSTAN_WEBHOOK_BITBUCKETSERVER_SECRET',
    'HMAC secret',
  ),
  'webhook.gogs.secret': webhookSecret('Gogs and Gitea', 'CAPSTAN_WEBHOOK_GOGS_SECRET', 'HMAC secret'),
  'webhook.max-payload-size-mb': {
    schema: z.coerce.number().int().min(1).max(50),
    default: 10,
    description:
      "largest webhook body in MB (Argo CD's webhook.maxPayloadSizeMB, whose default is 50); larger deliveries are refused with 413",
  },
  'webhook.allow-unsigned': {
    schema: booleanSetting,
    default: false,
    description:
      'accept deliveries of a provider that has no secret configured (Argo CD does; Capstan refuses them by default)',
  },
  'webhook.rate-limit.per-address': {
    schema: z.coerce.number().min(0.1).max(10_000),
    default: 10,
    description: 'webhook deliveries per second one sender address may make (a token bucket)',
  },
  'webhook.rate-limit.burst': {
    schema: z.coerce.number().int().min(1).max(100_000),
    default: 50,
    description:
      'deliveries one sender address may make at once before webhook.rate-limit.per-address applies',
  },
  'webhook.rate-limit.per-repository': {
    schema: z.coerce.number().int().min(1).max(100_000),
    default: 60,
    description: 'verified pushes per minute one repository may announce; more are answered 429 and audited',
  },
  'webhook.max-in-flight': {
    schema: z.coerce.number().int().min(1).max(1000),
    default: 8,
    description: 'webhook deliveries read and verified at once; more are answered 503 (bounds memory)',
  },
} satisfies Settings;

// Argo CD Notifications' deliveries (docs/notifications.md): what they are is argocd-notifications-cm's.
export const notificationSettings = {
  'notifications.max-attempts': {
    schema: z.coerce.number().int().min(1).max(100),
    default: 5,
    description: 'attempts to deliver one notification before it is recorded as failed',
  },
  'notifications.backoff-ms': {
    schema: z.coerce.number().int().min(10).max(300_000),
    default: 2000,
    description: 'delay before the second delivery attempt, doubled for each further one (at most 5 minutes)',
  },
  'notifications.timeout-ms': {
    schema: z.coerce.number().int().min(100).max(120_000),
    default: 10_000,
    description: 'time one delivery attempt (connection, request, answer) may take',
  },
  'notifications.template-timeout-ms': {
    schema: z.coerce.number().int().min(10).max(60_000),
    default: 2000,
    description: 'time rendering one template string may take (Go text/template in WebAssembly)',
  },
  'notifications.template-max-bytes': {
    schema: z.coerce
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024),
    default: 64 * 1024,
    description: 'largest rendered template string in bytes',
  },
} satisfies Settings;

export const apiSettings = {
  'grpc.host': { schema: z.string().min(1), default: '127.0.0.1', description: 'address of the gRPC server' },
  'grpc.port': {
    schema: z.coerce.number().int().min(0).max(65535),
    default: 8083,
    description: 'gRPC port (0 picks a free port)',
  },
  'api.http.host': {
    schema: z.string().min(1),
    default: '127.0.0.1',
    description: 'address of the HTTP/JSON API',
  },
  'api.http.port': {
    schema: z.coerce.number().int().min(0).max(65535),
    default: 8080,
    description: 'HTTP/JSON API port (0 picks a free port)',
  },
  'api.ui.dir': {
    schema: z.string(),
    default: '',
    description: "the web UI's built files (empty: the workspace's ui/dist, served when it was built)",
  },
  'api.body-limit': {
    schema: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024),
    default: 1024 * 1024,
    description: 'largest request body (HTTP and gRPC message) in bytes; larger ones are refused',
  },
  'api.input.max-depth': {
    schema: z.coerce.number().int().min(8).max(1000),
    default: 64,
    description: 'deepest nesting of objects and lists in a request or an applied YAML document',
  },
  'api.input.max-string-length': {
    schema: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024),
    default: 128 * 1024,
    description:
      "longest string in a request (characters); apply's manifests text is bounded by api.body-limit",
  },
  'api.input.max-entries': {
    schema: z.coerce.number().int().min(16).max(1_000_000),
    default: 10_000,
    description: 'most entries of one list or object in a request or an applied YAML document',
  },
  'rbac.policy-file': {
    schema: z.string().default(''),
    default: '',
    description: 'Argo CD policy.csv to load at start (empty: built-in roles only)',
  },
  'rbac.policy-csv': {
    schema: z.string().default(''),
    default: '',
    description: 'Argo CD policy.csv given inline (added to the file)',
  },
  'rbac.default-role': {
    schema: z.string().default(''),
    default: '',
    description: "Argo CD's policy.default, e.g. role:readonly (empty: deny unless allowed)",
  },
  'auth.session-ttl-seconds': {
    schema: z.coerce
      .number()
      .int()
      .min(60)
      .max(7 * 24 * 3600),
    default: 3600,
    description: 'lifetime of a login session token',
  },
  'auth.login.max-fail-count': {
    schema: z.coerce.number().int().min(1).max(1_000_000),
    default: 5,
    description:
      "failed logins of one account within the failure window before its logins are refused (Argo CD's ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT)",
  },
  'auth.login.max-fail-count-per-address': {
    schema: z.coerce.number().int().min(1).max(1_000_000),
    default: 50,
    description:
      'failed logins from one source address within the failure window before its logins are refused',
  },
  'auth.login.failure-window-seconds': {
    schema: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600),
    default: 300,
    description:
      "seconds after an account's or address's last failed login during which its failures count (Argo CD's ARGOCD_SESSION_FAILURE_WINDOW_SECONDS)",
  },
  'auth.login.max-cache-size': {
    schema: z.coerce.number().int().min(100).max(10_000_000),
    default: 10_000,
    description:
      "most accounts and addresses whose failed logins are remembered (Argo CD's ARGOCD_SESSION_MAX_CACHE_SIZE)",
  },
  'auth.signing-key': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_AUTH_SIGNING_KEY',
    description:
      'HMAC key (base64, 32+ bytes) for session and API tokens; empty: generated on first start and kept in the api schema',
  },
  'auth.admin-password': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_ADMIN_PASSWORD',
    description:
      'password of the bootstrap admin created on first start; empty: generated and written to auth.initial-admin-password-file',
  },
  'auth.oidc-client-secret': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_AUTH_OIDC_CLIENT_SECRET',
    description:
      "the OIDC client secret argocd-cm's oidc.config names as $oidc.clientSecret (Argo CD keeps it in argocd-secret; docs/sso.md); empty: a public client",
  },
  'auth.sso.owner-max-verification-age-seconds': {
    schema: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 24 * 3600),
    default: 30 * 24 * 3600,
    description:
      "how long after a single sign-on user's last login or refresh (the provider's last word on its groups) the ApplicationSets it owns are still reconciled as it (default: the refresh token's 30 days)",
  },
  'auth.initial-admin-password-file': {
    schema: z.string().default(''),
    default: '',
    description:
      'file (mode 600) receiving a generated bootstrap admin password; empty: $XDG_STATE_HOME/capstan/api/initial-admin-password (XDG default ~/.local/state)',
  },
  'auth.service-tokens': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_SERVICE_TOKENS',
    description: 'internal service tokens, "sync=<token>,appset=<token>" (each at least 32 characters)',
  },
  'auth.credential-readers': {
    schema: z.string().default('sync'),
    default: 'sync',
    description: 'services allowed to read cluster credentials (ClusterCredentials/Get), comma-separated',
  },
  'auth.delegation-key': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_AUTH_DELEGATION_KEY',
    description:
      'Ed25519 private key (PKCS#8 PEM) that signs delegations; empty: auth.delegation-key-file, else generated on first start and kept sealed in the api schema',
  },
  'auth.delegation-key-file': {
    schema: z.string().default(''),
    default: '',
    description: 'file holding the delegation private key (mode 600; used when auth.delegation-key is empty)',
  },
  'auth.delegation-ttl-seconds': {
    schema: z.coerce.number().int().min(10).max(900),
    default: 120,
    description: 'lifetime of a delegation the api mints for a forwarded request or an owner',
  },
  ...webhookSettings,
  ...notificationSettings,
  ...tlsSettings,
  'encryption.keys': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_API_ENCRYPTION_KEYS',
    description: 'cluster credential keyring, {"active":"k1","keys":{"k1":"<base64 32 bytes>"}}',
  },
  'encryption.key-file': {
    schema: z.string().default(''),
    default: '',
    description: 'file holding the keyring (when encryption.keys is empty)',
  },
  'projections.rebuild': {
    schema: booleanSetting,
    default: false,
    description: 'rebuild the projects, applications and clusters projections from the event store at start',
  },
  'bus.ext-accounts': {
    schema: z.string().default(''),
    default: '',
    description:
      'Capstan account of each external source that may ask for syncs on <ns>.ext.<source>.sync.request, "ci=ci-bot,release=release-bot" (empty: every such request is denied and audited)',
  },
  'repo.address': {
    schema: z.string().default(''),
    default: '',
    description: 'host:port of the repo service gRPC (empty: repository calls are unavailable)',
  },
  'repo.service-token': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_REPO_SERVICE_TOKEN',
    description: 'token the api presents to the repo service',
  },
  'api.control-namespace': {
    schema: z.string().min(1),
    default: DEFAULT_CONTROL_NAMESPACE,
    description:
      "Argo CD's control-plane namespace: an Application elsewhere needs its projects' sourceNamespaces (set as sync.control-namespace)",
  },
  'appset.address': {
    schema: z.string().default(''),
    default: '',
    description: 'host:port of the appset service gRPC (empty: ApplicationSet calls are unavailable)',
  },
  'appset.service-token': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_APPSET_SERVICE_TOKEN',
    description: 'token the api presents to the appset service',
  },
  'sync.address': {
    schema: z.string().default(''),
    default: '',
    description:
      'host:port of the sync service internal gRPC (ManagedResources, `capstan app diff`; empty: unavailable)',
  },
  'sync.service-token': {
    schema: z.string().default(''),
    default: '',
    secret: true,
    env: 'CAPSTAN_SYNC_SERVICE_TOKEN',
    description: 'token the api presents to the sync service',
  },
} satisfies Settings;
