// The keys of Argo CD's configuration objects (argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm,
// argocd-secret) that Capstan recognises, with Argo's names. A key either sets a Capstan setting of
// one service (`capstan`), with Argo's meaning, or is recognised but not implemented: it is never
// ignored in silence (see checkArgoSettings). The lists follow Argo CD's reference files
// docs/operator-manual/argocd-{cm,rbac-cm,cmd-params-cm,secret}.yaml.

export const ARGO_CONFIG_OBJECTS = [
  'argocd-cm',
  'argocd-rbac-cm',
  'argocd-cmd-params-cm',
  'argocd-secret',
  'argocd-notifications-cm',
  'argocd-notifications-secret',
] as const;

/** The Secrets among them (the others are ConfigMaps). */
export const ARGO_SECRET_OBJECTS: readonly ArgoConfigObject[] = [
  'argocd-secret',
  'argocd-notifications-secret',
];
export type ArgoConfigObject = (typeof ARGO_CONFIG_OBJECTS)[number];

/** How a value is read: Argo's values are all strings. */
export type ArgoValueKind =
  | 'bool'
  | 'duration'
  | 'seconds'
  | 'int'
  | 'number'
  | 'string'
  | 'yaml'
  | 'lua'
  | 'match-mode'
  | 'log-level'
  | 'capabilities'
  | 'ignore-differences'
  | 'resource-filter'
  | 'oidc-config'
  | 'scopes'
  | 'notifications';

export type CapstanService = 'api' | 'sync' | 'repo' | 'appset';

export interface ArgoKeySpec {
  object: ArgoConfigObject;
  /** The key; `<name>` stands for one dot-free segment, `<rest>` for the rest of the key. */
  key: string;
  value: ArgoValueKind;
  /** The Capstan setting it sets (absent: recognised, not implemented). */
  capstan?: {
    service: CapstanService;
    setting: string;
    /** Applied ConfigMaps take effect without restart; start-only keys at the service's next start. */
    live: boolean;
  };
  /** The value may hold a secret: events, audit rows, logs and answers say only set or unset. */
  sensitive?: boolean;
  /** Why it is not implemented, or what differs from Argo CD. */
  note?: string;
}

const SSO =
  'not implemented by Capstan single sign-on (docs/sso.md): Capstan talks to an OIDC provider directly, without Dex in between';

const implemented = (
  object: ArgoConfigObject,
  key: string,
  value: ArgoValueKind,
  service: CapstanService,
  setting: string,
  live: boolean,
): ArgoKeySpec => ({ object, key, value, capstan: { service, setting, live } });

const notImplemented = (
  object: ArgoConfigObject,
  keys: readonly string[],
  value: ArgoValueKind = 'string',
  note = 'not implemented by Capstan',
  sensitive = false,
): ArgoKeySpec[] => keys.map((key) => ({ object, key, value, note, ...(sensitive ? { sensitive } : {}) }));

const cm: ArgoKeySpec[] = [
  implemented(
    'argocd-cm',
    'application.sync.impersonation.enabled',
    'bool',
    'sync',
    'application.sync.impersonation.enabled',
    true,
  ),
  implemented('argocd-cm', 'timeout.reconciliation', 'duration', 'sync', 'reconcile.resync-ms', true),
  implemented('argocd-cm', 'resource.customizations', 'yaml', 'sync', 'resource.customizations', true),
  implemented(
    'argocd-cm',
    'resource.customizations.health.<rest>',
    'lua',
    'sync',
    'resource.customizations',
    true,
  ),
  implemented(
    'argocd-cm',
    'resource.customizations.useOpenLibs.<rest>',
    'bool',
    'sync',
    'resource.customizations',
    true,
  ),
  implemented(
    'argocd-cm',
    'resource.customizations.ignoreDifferences.<rest>',
    'ignore-differences',
    'sync',
    'resource.customizations',
    true,
  ),
  ...notImplemented(
    'argocd-cm',
    [
      'resource.customizations.actions.<rest>',
      'resource.customizations.ignoreResourceUpdates.<rest>',
      'resource.customizations.knownTypeFields.<rest>',
    ],
    'yaml',
  ),
  implemented('argocd-cm', 'resource.exclusions', 'resource-filter', 'sync', 'resource.exclusions', true),
  implemented('argocd-cm', 'resource.inclusions', 'resource-filter', 'sync', 'resource.inclusions', true),
  // Single sign-on (docs/sso.md): read by the api at every login, so a change is live. oidc.config
  // names its client secret as `$oidc.clientSecret` (a literal secret is refused: it would be stored).
  implemented('argocd-cm', 'oidc.config', 'oidc-config', 'api', 'sso.oidc-config', true),
  implemented('argocd-cm', 'url', 'string', 'api', 'sso.url', true),
  ...notImplemented('argocd-cm', ['dex.config'], 'yaml', SSO, true),
  ...notImplemented(
    'argocd-cm',
    ['additionalUrls', 'oidc.tls.insecure.skip.verify', 'dex.auth.connectorId'],
    'string',
    SSO,
  ),
  // A call without a token is served as `anonymous` with policy.default's rights alone (Argo CD's
  // meaning), read by the api within 2 s of an apply.
  implemented('argocd-cm', 'users.anonymous.enabled', 'bool', 'api', 'users.anonymous', true),
  ...notImplemented(
    'argocd-cm',
    ['server.rbac.log.enforce.enable'],
    'bool',
    "Argo CD's switch for RBAC on pod logs (the `logs` resource), removed in Argo CD 3.0 where that RBAC is always enforced; Capstan serves no pod logs, so there is nothing for it to switch",
  ),
  // Local accounts: they are created with `capstan account create`; these keys enable, disable and
  // give capabilities to an account of that name, as Argo CD's do, live (the api reads them per login
  // and per request, within its 2 s account cache).
  implemented('argocd-cm', 'admin.enabled', 'bool', 'api', 'accounts', true),
  implemented('argocd-cm', 'accounts.<name>', 'capabilities', 'api', 'accounts', true),
  implemented('argocd-cm', 'accounts.<name>.enabled', 'bool', 'api', 'accounts', true),
  // The git webhook (docs/webhooks.md): its body bound, read per delivery (within 2 s).
  implemented('argocd-cm', 'webhook.maxPayloadSizeMB', 'int', 'api', 'webhook.max-payload-size-mb', true),
  ...notImplemented('argocd-cm', [
    'application.allowedNodeLabels',
    'application.instanceLabelKey',
    'application.links',
    'application.resourceTrackingMethod',
    'application.sync.impersonation.enforced',
    'application.sync.requireOverridePrivilegeForRevisionSync',
    'cluster.inClusterEnabled',
    'commit.author.email',
    'commit.author.name',
    'exec.enabled',
    'exec.shells',
    'extension.config',
    'extension.config.<rest>',
    'ga.anonymizeusers',
    'ga.trackingid',
    'helm.enable',
    'helm.valuesFileSchemes',
    'help.chatText',
    'help.chatUrl',
    'help.download.<rest>',
    'installationID',
    'jsonnet.enable',
    'kustomize.enable',
    'passwordPattern',
    'project.links',
    'resource.compareoptions',
    'resource.customLabels',
    'resource.excludeEventLabelKeys',
    'resource.ignoreResourceUpdatesEnabled',
    'resource.includeEventLabelKeys',
    'resource.links',
    'resource.respectRBAC',
    'resource.sensitive.mask.annotations',
    'server.maxPodLogsToRender',
    'server.rbac.rollback.enforce.enable',
    'sourceHydrator.commitMessageTemplate',
    'sourceHydrator.readmeMessageTemplate',
    'statusbadge.enabled',
    'statusbadge.url',
    'timeout.hard.reconciliation',
    'timeout.reconciliation.jitter',
    'ui.bannercontent',
    'ui.bannerpermanent',
    'ui.bannerposition',
    'ui.bannerurl',
    'ui.cssurl',
    'ui.loginButtonText',
    'ui.view.resources.disabled',
    'users.session.duration',
    'webhook.refresh.jitter',
    'webhook.refresh.jitter.threshold',
  ]),
];

const rbac: ArgoKeySpec[] = [
  implemented('argocd-rbac-cm', 'policy.csv', 'string', 'api', 'rbac.policy-csv', true),
  // Argo CD concatenates policy.csv with every policy.<name>.csv (the overlays).
  implemented('argocd-rbac-cm', 'policy.<name>.csv', 'string', 'api', 'rbac.policy-csv', true),
  implemented('argocd-rbac-cm', 'policy.default', 'string', 'api', 'rbac.default-role', true),
  implemented('argocd-rbac-cm', 'policy.matchMode', 'match-mode', 'api', 'rbac.match-mode', true),
  // The ID token claims whose values are RBAC subjects (Argo CD's default: [groups]).
  implemented('argocd-rbac-cm', 'scopes', 'scopes', 'api', 'sso.scopes', true),
];

const cmdParams: ArgoKeySpec[] = [
  implemented(
    'argocd-cmd-params-cm',
    'controller.operation.processors',
    'int',
    'sync',
    'sync.parallelism',
    false,
  ),
  implemented(
    'argocd-cmd-params-cm',
    'controller.self.heal.timeout.seconds',
    'seconds',
    'sync',
    'reconcile.self-heal-timeout-ms',
    false,
  ),
  implemented(
    'argocd-cmd-params-cm',
    'controller.self.heal.backoff.timeout.seconds',
    'seconds',
    'sync',
    'reconcile.self-heal-backoff-ms',
    false,
  ),
  implemented(
    'argocd-cmd-params-cm',
    'controller.self.heal.backoff.factor',
    'number',
    'sync',
    'reconcile.self-heal-backoff-factor',
    false,
  ),
  implemented(
    'argocd-cmd-params-cm',
    'controller.self.heal.backoff.cap.seconds',
    'seconds',
    'sync',
    'reconcile.self-heal-backoff-cap-ms',
    false,
  ),
  // Log levels: each service sets its logger's level from the applied key at once (live, where Argo CD
  // reads them at start), unless a flag or the environment pinned log.level.
  implemented('argocd-cmd-params-cm', 'controller.log.level', 'log-level', 'sync', 'log.level', true),
  implemented('argocd-cmd-params-cm', 'server.log.level', 'log-level', 'api', 'log.level', true),
  implemented('argocd-cmd-params-cm', 'reposerver.log.level', 'log-level', 'repo', 'log.level', true),
  // argocd-cm's kustomize keys are read per render by Argo CD's repo server, so they are live here
  // too (the repo service follows applied objects: services/repo/src/settings/applied-settings.ts).
  implemented('argocd-cm', 'kustomize.buildOptions', 'string', 'repo', 'kustomize.build-options', true),
  // Named kustomize binaries (spec.source.kustomize.version): kustomize.path.<v> (Argo CD 2.x+) and
  // the older kustomize.version.<v>, with kustomize.buildOptions.<v> for that version's builds.
  implemented('argocd-cm', 'kustomize.path.<rest>', 'string', 'repo', 'kustomize.versions', true),
  implemented('argocd-cm', 'kustomize.version.<rest>', 'string', 'repo', 'kustomize.versions', true),
  implemented('argocd-cm', 'kustomize.buildOptions.<rest>', 'string', 'repo', 'kustomize.versions', true),
  implemented(
    'argocd-cmd-params-cm',
    'applicationsetcontroller.log.level',
    'log-level',
    'appset',
    'log.level',
    true,
  ),
  // The rest of Argo's component parameters (their processes' flags): recognised, not implemented.
  ...notImplemented('argocd-cmd-params-cm', [
    'application.namespaces',
    'applicationsetcontroller.<rest>',
    'commit.server',
    'commitserver.<rest>',
    'controller.<rest>',
    'dexserver.<rest>',
    'hydrator.enabled',
    'log.format.timestamp',
    'notificationscontroller.<rest>',
    'otlp.address',
    'otlp.attrs',
    'otlp.headers',
    'otlp.insecure',
    'otlp.sample.ratio',
    'redis.compression',
    'redis.db',
    'redis.sentinel.hosts',
    'redis.sentinel.master',
    'redis.server',
    'repo.server',
    'reposerver.<rest>',
    'server.<rest>',
  ]),
];

// argocd-secret: the git webhook's shared secrets (docs/webhooks.md) and the oidc.* keys (below) are
// implemented, kept sealed in the api schema (api.settings_secrets); the rest are recognised, never
// stored, never echoed (admin password: auth.admin-password; session key: auth.signing-key).
const webhookSecret = (key: string): ArgoKeySpec => ({
  ...implemented('argocd-secret', key, 'string', 'api', key, true),
  sensitive: true,
});
const secret: ArgoKeySpec[] = [
  ...[
    'webhook.github.secret',
    'webhook.gitlab.secret',
    'webhook.bitbucket.uuid',
    'webhook.bitbucketserver.secret',
    'webhook.gogs.secret',
  ].map(webhookSecret),
  ...notImplemented(
    'argocd-secret',
    [
      'admin.password',
      'admin.passwordMtime',
      'server.secretkey',
      'accounts.<name>.password',
      'accounts.<name>.passwordMtime',
      'accounts.<name>.tokens',
      'tls.crt',
      'tls.key',
      'webhook.azuredevops.password',
      'webhook.azuredevops.username',
      'webhook.harbor.secret',
      'dex.<rest>',
    ],
    'string',
    'not implemented by Capstan (admin password: auth.admin-password; session key: auth.signing-key; Azure DevOps and Harbor webhooks: not supported); the value is not stored',
    true,
  ),
];

// The OIDC client secret (and other oidc.* values) that oidc.config names as `$oidc.clientSecret`:
// kept sealed by the api (api.settings_secrets), never in events, audit rows or answers.
const oidcSecret: ArgoKeySpec = {
  ...implemented('argocd-secret', 'oidc.<rest>', 'string', 'api', 'sso.secrets', true),
  sensitive: true,
};

// Argo CD Notifications (docs/notifications.md): argocd-notifications-cm is read as a whole by the
// api's notifier (readNotificationsConfig, which also checks it at apply); argocd-notifications-secret
// holds the values its `$key` references name, kept sealed like argocd-secret's webhook secrets.
const notifications: ArgoKeySpec[] = [
  ...[
    'trigger.<name>',
    'template.<name>',
    'service.webhook.<name>',
    'service.slack',
    'service.email',
    'subscriptions',
  ].map((key) => implemented('argocd-notifications-cm', key, 'notifications', 'api', 'notifications', true)),
  ...notImplemented(
    'argocd-notifications-cm',
    ['context', 'defaultTriggers', 'defaultTriggers.<name>', 'service.<rest>'],
    'string',
    'not implemented by Capstan (services: webhook, slack and email only; no default triggers)',
  ),
  {
    ...implemented('argocd-notifications-secret', '<rest>', 'string', 'api', 'notifications', true),
    sensitive: true,
  },
];

export const ARGO_KEYS: readonly ArgoKeySpec[] = [
  ...cm,
  ...rbac,
  ...cmdParams,
  ...secret,
  oidcSecret,
  ...notifications,
];

/**
 * The `capstan.setting` names that are no setting of their service: the api reads these keys from the
 * object in force itself (the latest applied version, else the file given at start with
 * --argocd-config-dir): argocd-cm's account and single sign-on keys, argocd-rbac-cm's scopes and
 * matchMode, argocd-secret's oidc.* values and the notifications objects. Any other key a service is
 * given whose setting it does not have is named at start, never dropped in silence.
 */
export const OBJECT_READ_SETTINGS: ReadonlySet<string> = new Set([
  'users.anonymous',
  'accounts',
  'sso.url',
  'sso.oidc-config',
  'sso.scopes',
  'sso.secrets',
  'rbac.match-mode',
  'notifications',
]);
