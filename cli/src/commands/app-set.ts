// capstan app set: Argo CD's `argocd app set` — change an Application's source, destination and sync
// policy with flags (turn on self-heal, add a sync option, set retries) without writing a manifest.
// Only the flags given change anything; the result is written with the Application's
// resourceVersion, so a concurrent change is refused rather than overwritten.
import type { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { addSourceFlags, applySourceFlags, NO_SOURCE_FLAGS, type SourceFlags } from './app-source-flags.js';

export interface AppSetFlags extends Partial<SourceFlags> {
  project?: string;
  repo?: string;
  path?: string;
  helmChart?: string;
  revision?: string;
  destServer?: string;
  destName?: string;
  destNamespace?: string;
  syncPolicy?: string;
  autoPrune?: boolean;
  selfHeal?: boolean;
  allowEmpty?: boolean;
  syncOption: string[];
  syncRetryLimit?: number;
  syncRetryBackoffDuration?: string;
  syncRetryBackoffFactor?: number;
  syncRetryBackoffMaxDuration?: string;
}

const AUTOMATED = new Set(['automated', 'automatic', 'auto']);
const MANUAL = new Set(['manual', 'none']);

function syncPolicyOf(spec: apiv1.ApplicationSpec, o: AppSetFlags): apiv1.SyncPolicy | undefined {
  let policy = spec.syncPolicy ? { ...spec.syncPolicy } : apiv1.SyncPolicy.fromPartial({});
  if (o.syncPolicy !== undefined) {
    if (MANUAL.has(o.syncPolicy)) policy = { ...policy, automated: undefined };
    else if (AUTOMATED.has(o.syncPolicy))
      policy = { ...policy, automated: policy.automated ?? apiv1.SyncPolicyAutomated.fromPartial({}) };
    else
      throw new CliError(
        `--sync-policy: expected one of manual (none) or automated (auto, automatic), got ${JSON.stringify(o.syncPolicy)}`,
        2,
      );
  }
  const automatedFlags = o.autoPrune !== undefined || o.selfHeal !== undefined || o.allowEmpty !== undefined;
  if (automatedFlags) {
    // argocd app set: these only make sense with automation, which must be on (or turned on here).
    if (!policy.automated)
      throw new CliError('--auto-prune, --self-heal and --allow-empty need --sync-policy automated', 2);
    policy.automated = {
      ...policy.automated,
      ...(o.autoPrune !== undefined ? { prune: o.autoPrune } : {}),
      ...(o.selfHeal !== undefined ? { selfHeal: o.selfHeal } : {}),
      ...(o.allowEmpty !== undefined ? { allowEmpty: o.allowEmpty } : {}),
    };
  }
  if (o.syncOption.length > 0) policy.syncOptions = mergeSyncOptions(policy.syncOptions, o.syncOption);
  const retry = retryOf(policy.retry, o);
  if (retry !== policy.retry) policy.retry = retry;
  const empty =
    !policy.automated && policy.syncOptions.length === 0 && !policy.retry && !policy.managedNamespaceMetadata;
  return empty ? undefined : policy;
}

/** Argo CD: a sync option replaces the one with the same key (`Prune=false` replaces `Prune=true`). */
export function mergeSyncOptions(current: readonly string[], added: readonly string[]): string[] {
  const keyOf = (o: string) => o.split('=')[0]!.trim();
  const out = [...current];
  for (const option of added) {
    if (!/^[A-Za-z]+=.+$/.test(option))
      throw new CliError(
        `--sync-option: expected Key=value (e.g. Prune=false), got ${JSON.stringify(option)}`,
        2,
      );
    const i = out.findIndex((o) => keyOf(o) === keyOf(option));
    if (i >= 0) out[i] = option;
    else out.push(option);
  }
  return out;
}

function retryOf(current: apiv1.RetryStrategy | undefined, o: AppSetFlags): apiv1.RetryStrategy | undefined {
  const given =
    o.syncRetryLimit !== undefined ||
    o.syncRetryBackoffDuration !== undefined ||
    o.syncRetryBackoffFactor !== undefined ||
    o.syncRetryBackoffMaxDuration !== undefined;
  if (!given) return current;
  // argocd: --sync-retry-limit 0 removes the retry strategy.
  if (o.syncRetryLimit === 0) return undefined;
  const backoff = current?.backoff ?? apiv1.Backoff.fromPartial({});
  return {
    limit: o.syncRetryLimit ?? current?.limit ?? 0,
    backoff: {
      ...backoff,
      ...(o.syncRetryBackoffDuration !== undefined ? { duration: o.syncRetryBackoffDuration } : {}),
      ...(o.syncRetryBackoffFactor !== undefined ? { factor: o.syncRetryBackoffFactor } : {}),
      ...(o.syncRetryBackoffMaxDuration !== undefined ? { maxDuration: o.syncRetryBackoffMaxDuration } : {}),
    },
  };
}

/** The Application with the flags' changes (pure): what `capstan app set` writes. */
export function applySetFlags(app: apiv1.Application, o: AppSetFlags): apiv1.Application {
  const spec = app.spec ?? apiv1.ApplicationSpec.fromPartial({});
  const source = { ...(spec.source ?? apiv1.ApplicationSource.fromPartial({})) };
  if (o.repo !== undefined) source.repoUrl = o.repo;
  if (o.path !== undefined) source.path = o.path;
  if (o.helmChart !== undefined) source.chart = o.helmChart;
  if (o.revision !== undefined) source.targetRevision = o.revision;
  const given = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  const withTools = applySourceFlags(source, { ...NO_SOURCE_FLAGS, ...given });
  const destination = { ...(spec.destination ?? apiv1.ApplicationDestination.fromPartial({})) };
  if (o.destServer !== undefined) destination.server = o.destServer;
  if (o.destName !== undefined) destination.name = o.destName;
  if (o.destNamespace !== undefined) destination.namespace = o.destNamespace;
  return {
    ...app,
    spec: {
      ...spec,
      ...(o.project !== undefined ? { project: o.project } : {}),
      source: withTools,
      destination,
      syncPolicy: syncPolicyOf(spec, o),
    },
    status: undefined,
  };
}

const bool = (flag: string) => (v: string) => {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new CliError(`${flag}: expected true or false, got ${JSON.stringify(v)}`, 2);
};
const int = (flag: string) => (v: string) => {
  if (!/^-?\d+$/.test(v)) throw new CliError(`${flag}: expected a whole number, got ${JSON.stringify(v)}`, 2);
  return Number(v);
};

export function addSetCommand(app: Command): void {
  const cmd = app
    .command('set')
    .description("change an Application's source, destination or sync policy (argocd app set)")
    .argument('<name>')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--project <name>', 'project')
    .option('--repo <url>', 'repository URL')
    .option('--path <path>', 'path in the repository')
    .option('--helm-chart <chart>', 'Helm chart name')
    .option('--revision <rev>', 'target revision')
    .option('--dest-server <url>', 'destination cluster URL')
    .option('--dest-name <name>', 'destination cluster name')
    .option('--dest-namespace <ns>', 'destination namespace')
    .option('--sync-policy <policy>', 'manual (none) or automated (auto)')
    .option('--auto-prune [bool]', 'automated sync prunes', bool('--auto-prune'))
    .option('--self-heal [bool]', 'automated sync undoes drift', bool('--self-heal'))
    .option('--allow-empty [bool]', 'automated sync may leave no resources', bool('--allow-empty'))
    .option(
      '--sync-option <Key=value>',
      'a sync option, replacing the one with the same key (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option(
      '--sync-retry-limit <n>',
      'retries of a failed sync (0 removes the retry strategy)',
      int('--sync-retry-limit'),
    )
    .option('--sync-retry-backoff-duration <d>', 'first retry after (e.g. 5s)')
    .option(
      '--sync-retry-backoff-factor <n>',
      'each retry waits this many times longer',
      int('--sync-retry-backoff-factor'),
    )
    .option('--sync-retry-backoff-max-duration <d>', 'longest wait between retries (e.g. 3m)');
  addSourceFlags(cmd).action((name: string, o: AppSetFlags & { appNamespace: string }, cmd: Command) =>
    withConnection(cmd, async (c) => {
      const current = await c.call(c.applications.get.bind(c.applications), {
        name,
        appNamespace: o.appNamespace,
        project: '',
      });
      await c.call(c.applications.update.bind(c.applications), { application: applySetFlags(current, o) });
      process.stdout.write(`application '${name}' updated\n`);
    }),
  );
}
