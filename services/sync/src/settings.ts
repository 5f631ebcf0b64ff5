// The sync service's settings. Every one can be set, highest precedence first, by a command-line
// flag, an environment variable, the YAML configuration file (--config / CAPSTAN_CONFIG), or its
// default (see @capstan/service loadConfig). The impersonation switch in particular:
//   --enable-impersonation (or --enable-impersonation=false)
//   > CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED=true|false
//   > argocd-cm `application.sync.impersonation.enabled: "true"` applied with `capstan apply -f` (live)
//   > the same key in an argocd-cm file of --argocd-config-dir
//   > `application.sync.impersonation.enabled: true` (flat) or nested in the --config file
//   > default false. (docs/configuration.md has the table for every setting.)
import { z } from 'zod';
import { internalServerSettings, tlsSettings } from '@capstan/service-identity';
import {
  DEFAULT_CONTROL_NAMESPACE,
  readArgoValue,
  readFilteredResources,
  type FilteredResource,
} from '@capstan/policy';
import { booleanSetting, type Settings } from '@capstan/service';

/** resource.exclusions / inclusions: Argo's YAML text (environment, files) or the applied list. */
const filteredResources = z.unknown().transform((value, ctx): FilteredResource[] => {
  const read =
    typeof value === 'string' ? readArgoValue('resource-filter', value) : readFilteredResources(value);
  if ('problem' in read) {
    ctx.addIssue({ code: 'custom', message: read.problem });
    return z.NEVER;
  }
  return read.value as FilteredResource[];
});

export const syncSettings = {
  'application.sync.impersonation.enabled': {
    schema: booleanSetting,
    default: false,
    flags: ['enable-impersonation'],
    description:
      'sync as the ServiceAccount resolved from destinationServiceAccounts (every request impersonated); off: the cluster credentials, with a warning when rules are ignored',
  },
  'sync.strict-service-accounts': {
    schema: booleanSetting,
    default: false,
    flags: ['strict-service-accounts'],
    description:
      'refuse a sync when no destinationServiceAccounts rule matches instead of using the default ServiceAccount',
  },
  'sync.parallelism': {
    schema: z.coerce.number().int().min(1).max(256),
    default: 4,
    description:
      'how many Applications sync at the same time in this replica (one sync at a time per Application)',
  },
  'sync.control-namespace': {
    schema: z.string().min(1),
    default: DEFAULT_CONTROL_NAMESPACE,
    description:
      "Argo CD's control-plane namespace (Applications elsewhere need their projects' sourceNamespaces)",
  },
  'sync.max-attempts': {
    schema: z.coerce.number().int().min(1).max(100),
    default: 5,
    description: 'attempts of a sync whose target cluster is unreachable, with backoff, before it fails',
  },
  'sync.lease-ms': {
    schema: z.coerce.number().int().min(5_000),
    default: 15_000,
    description:
      'lease of a running sync, renewed every third of it by a heartbeat while the sync runs; a sync not renewed for this long (its replica died) is taken over by another replica or the restarted one',
  },
  'sync.hook-timeout-ms': {
    schema: z.coerce.number().int().min(1_000),
    default: 300_000,
    description: 'how long a hook Job or Pod may run before the hook fails',
  },
  'sync.wave-timeout-ms': {
    schema: z.coerce.number().int().min(1_000),
    default: 300_000,
    description:
      'how long the resources of a sync wave may take to become Healthy before the sync fails (Argo CD waits without bound)',
  },
  'resource.customizations-file': {
    schema: z.string(),
    default: '',
    description:
      "YAML file of argocd-cm data keys (resource.customizations, resource.customizations.health.<group>_<kind>, resource.customizations.useOpenLibs.<group>_<kind>): custom Lua health checks, read at start-up; '' = built-in rules only",
  },
  'resource.customizations': {
    schema: z.record(z.string(), z.string()),
    default: {},
    flags: [],
    description:
      "argocd-cm's resource.customizations keys (health.<group>_<kind>, useOpenLibs.<group>_<kind>, the legacy resource.customizations): from --argocd-config-dir or an applied argocd-cm, live; on top of resource.customizations-file",
  },
  'resource.exclusions': {
    schema: filteredResources,
    default: [],
    flags: [],
    description:
      "argocd-cm's resource.exclusions: a YAML list of {apiGroups, kinds, clusters} globs whose resources are neither synced nor compared (ExcludedResourceWarning); Argo's core exclusions (Events, metrics) always apply; live",
  },
  'resource.inclusions': {
    schema: filteredResources,
    default: [],
    flags: [],
    description:
      "argocd-cm's resource.inclusions: when given, only resources one of these {apiGroups, kinds, clusters} entries matches are synced and compared; live",
  },
  'sync.request-timeout-ms': {
    schema: z.coerce.number().int().min(100),
    default: 60_000,
    description:
      'bound on one request to a target cluster; a cluster that does not answer in time is retried like an unreachable one',
  },
  'reconcile.enabled': {
    schema: booleanSetting,
    default: true,
    description:
      'watch live objects of every Application as its ServiceAccount, publish sync.status-changed and run automated sync and self-heal',
  },
  'reconcile.resync-ms': {
    schema: z.coerce
      .number()
      .int()
      .refine((ms) => ms === 0 || ms >= 1_000, 'must be 0 (off) or at least 1000'),
    default: 180_000,
    description:
      "full refresh of every Application (desired state re-rendered, compared again) at a random point between 2/3 of this and this (Argo CD's timeout.reconciliation 120 s + 60 s jitter); 0: no periodic refresh (changes, pushes and watches still refresh)",
  },
  'reconcile.self-heal-backoff-ms': {
    schema: z.coerce.number().int().min(0),
    default: 2_000,
    description:
      "self-heal backoff: the delay before the second self-heal after a sync (Argo CD's --self-heal-backoff-timeout-seconds); 0: a fixed reconcile.self-heal-timeout-ms",
  },
  'reconcile.self-heal-backoff-factor': {
    schema: z.coerce.number().min(1),
    default: 3,
    description: "self-heal backoff factor between attempts (Argo CD's --self-heal-backoff-factor)",
  },
  'reconcile.self-heal-backoff-cap-ms': {
    schema: z.coerce.number().int().min(0),
    default: 300_000,
    description: "longest self-heal backoff (Argo CD's --self-heal-backoff-cap-seconds)",
  },
  'reconcile.self-heal-timeout-ms': {
    schema: z.coerce.number().int().min(0),
    default: 5_000,
    description:
      "fixed delay between self-heal attempts when reconcile.self-heal-backoff-ms is 0 (Argo CD's --self-heal-timeout-seconds)",
  },
  'api.address': {
    schema: z.string().min(1),
    default: '127.0.0.1:8081',
    description: 'host:port of the api internal gRPC (cluster credentials)',
  },
  'api.service-token': {
    schema: z.string(),
    default: '',
    secret: true,
    description: 'service token the sync service authenticates to the api with (environment or file only)',
  },
  ...tlsSettings,
  // The internal gRPC server (SyncService.ManagedResources, behind `capstan app diff`), api only.
  ...internalServerSettings({
    port: 8093,
    purpose: 'SyncService, called by the api only',
    callers: '"api=<token>"',
  }),
  'auth.service-tokens': {
    schema: z.string(),
    default: '',
    secret: true,
    description:
      'tokens of the services allowed to call the internal gRPC server, "api=<token>" (each at least 32 characters); empty: the server is off and `capstan app diff` answers UNAVAILABLE',
  },
  'repo.address': {
    schema: z.string().min(1),
    default: '127.0.0.1:8082',
    description: 'host:port of the repo service internal gRPC (manifest generation)',
  },
  'repo.service-token': {
    schema: z.string(),
    default: '',
    secret: true,
    description:
      'service token the sync service authenticates to the repo service with (environment or file only)',
  },
} satisfies Settings;
