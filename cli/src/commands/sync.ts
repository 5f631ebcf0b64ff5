// `capstan sync explain`: which identity a sync would use and why, computed by the very function
// the sync service calls (explainSync from @capstan/policy).
//
// The offline form is a contract other tools script against; keep it exactly:
//   capstan sync explain --offline -f FILE [-f FILE …] --app NAME [--impersonation on|off]
//     [--strict] [--cluster NAME=SERVER_URL …] -o json
// prints one JSON object with at least allowed, impersonation, username, serviceAccount,
// matchedRule, fallback and reason. A refusal is `allowed: false` with exit status 0; usage errors
// exit 2, unreadable or invalid files exit 1. Without --offline the same decision is made from what
// the api holds (`capstan sync explain --app NAME`), with the caller's rights.
import { Command, Option } from 'commander';
import Table from 'cli-table3';
import { status as grpcStatus } from '@grpc/grpc-js';
import {
  ARGO_API_VERSION,
  ClusterDirectory,
  decodeArgoObject,
  explainSync,
  ManifestError,
  ManifestErrors,
  MAX_CHAIN_DEPTH,
  parseArgoManifests,
  type AppProject,
  type Application,
  type ArgoManifests,
  type ClusterRef,
  type SyncDecision,
} from '@capstan/policy';
import { apiv1 } from '@capstan/proto';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { manifestFiles, readManifestFile } from '../input/manifest-files.js';

const EXIT_INPUT = 1;
const EXIT_USAGE = 2;
// A CliError here is a problem with how the command was called or with what it was given; never a
// refusal (that is `allowed: false`, exit status 0).

interface ExplainOptions {
  offline?: boolean;
  file: string[];
  app?: string;
  impersonation: 'on' | 'off';
  strict?: boolean;
  automated?: boolean;
  cluster: string[];
  output: 'json' | 'table';
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function syncCommand(): Command {
  const sync = new Command('sync').description('sync operations: explain which identity a sync would use');
  sync
    .command('explain')
    .description(
      'explain the sync decision for an Application: every check, every destinationServiceAccounts rule, the identity and why',
    )
    .option('--offline', 'decide from the given files only, with no server running (default: ask the api)')
    .option(
      '-f, --file <path>',
      'Argo CD YAML or JSON (several documents per file; a directory reads its *.yaml, *.yml, *.json; - is stdin); repeatable',
      collect,
      [],
    )
    .option('--app <name>', 'the Application: NAME, or NAMESPACE/NAME when names repeat across namespaces')
    .addOption(
      new Option('--impersonation <state>', 'application.sync.impersonation.enabled')
        .choices(['on', 'off'])
        .default('off'),
    )
    .option('--strict', 'refuse instead of using the default ServiceAccount when no rule matches')
    .option(
      '--automated',
      'explain an automated sync (sync windows with manualSync do not let it through); default: a manual sync, now',
    )
    .option(
      '--cluster <name=server>',
      'a registered cluster, NAME=SERVER_URL (in-cluster is https://kubernetes.default.svc); repeatable',
      collect,
      [],
    )
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'),
    )
    .addHelpText(
      'after',
      '\nA refusal prints allowed: false and exits 0; usage errors exit 2; unreadable or invalid files exit 1.',
    )
    .action(async (opts: ExplainOptions, cmd: Command) => {
      // A CliError reaches main.ts, which prints it and exits with its status.
      const decision = opts.offline ? explainOffline(opts) : await explainOnline(opts, cmd);
      process.stdout.write(
        opts.output === 'json' ? `${JSON.stringify(decision, null, 2)}\n` : renderTable(decision),
      );
    });
  return sync;
}

function explainOffline(opts: ExplainOptions): SyncDecision {
  if (opts.file.length === 0) throw new CliError('--offline needs at least one -f FILE', EXIT_USAGE);
  if (!opts.app) throw new CliError('--app NAME is required', EXIT_USAGE);
  const extraClusters = opts.cluster.map(parseClusterFlag);
  const manifests = readManifests(opts.file);
  const app = findApplication(manifests.applications, opts.app);
  const byName = new Map(manifests.projects.map((p) => [p.metadata.name, p]));
  return explainSync({
    application: app,
    projects: (name) => byName.get(name),
    // --cluster flags come last so they win over cluster Secrets in the files.
    clusters: new ClusterDirectory([...manifests.clusters, ...extraClusters]),
    impersonation: opts.impersonation === 'on',
    strict: opts.strict === true,
    requireRegisteredCluster: false,
    now: new Date(),
    manual: opts.automated !== true,
  });
}

/**
 * Online: the Application, its project chain and the registered clusters come from the api (with
 * the caller's rights), and the same explainSync decides. The api does not say how the sync service
 * is configured, so --impersonation and --strict still describe that.
 */
async function explainOnline(opts: ExplainOptions, cmd: Command): Promise<SyncDecision> {
  if (opts.file.length > 0) {
    throw new CliError(
      '-f FILE is for --offline; online, the Application, its projects and clusters come from the api',
      EXIT_USAGE,
    );
  }
  if (opts.cluster.length > 0)
    throw new CliError('--cluster is for --offline; online, the api knows the clusters', EXIT_USAGE);
  if (!opts.app) throw new CliError('--app NAME is required', EXIT_USAGE);
  const slash = opts.app.indexOf('/');
  const appNamespace = slash >= 0 ? opts.app.slice(0, slash) : '';
  const name = slash >= 0 ? opts.app.slice(slash + 1) : opts.app;
  try {
    return await withConnection(cmd, async (c) => {
      const found = await c.call(c.applications.get.bind(c.applications), {
        name,
        appNamespace,
        project: '',
      });
      const application = decodeFromApi('Application', {
        name: found.metadata?.name ?? name,
        namespace: found.metadata?.namespace || 'argocd',
        spec: apiv1.ApplicationSpec.toJSON(found.spec ?? apiv1.ApplicationSpec.fromPartial({})),
      }) as Application;
      const projects = await projectChainFromApi(c, application.spec.project);
      return explainSync({
        application,
        projects: (p) => projects.get(p),
        clusters: new ClusterDirectory(await clustersFromApi(c, application), { inCluster: false }),
        impersonation: opts.impersonation === 'on',
        strict: opts.strict === true,
        requireRegisteredCluster: true,
        now: new Date(),
        manual: opts.automated !== true,
      });
    });
  } catch (err) {
    const e = err as { code?: unknown; details?: unknown };
    if (typeof e.code === 'number' && typeof e.details === 'string') {
      throw new CliError(`${grpcStatus[e.code] ?? e.code}: ${e.details}`, EXIT_INPUT);
    }
    throw err;
  }
}

function decodeFromApi(
  kind: 'AppProject' | 'Application',
  o: { name: string; namespace: string; spec: unknown },
): AppProject | Application {
  try {
    return decodeArgoObject(
      {
        apiVersion: ARGO_API_VERSION,
        kind,
        metadata: { name: o.name, namespace: o.namespace },
        spec: o.spec,
      },
      `${kind} ${o.name} from the api`,
    ).value as AppProject | Application;
  } catch (err) {
    if (err instanceof ManifestError) throw new CliError(err.message, EXIT_INPUT);
    throw err;
  }
}

/** The project and its parents, as far as they exist: a missing one is for explainSync to report. */
async function projectChainFromApi(c: Connection, first: string): Promise<Map<string, AppProject>> {
  const projects = new Map<string, AppProject>();
  for (
    let next: string | undefined = first;
    next && !projects.has(next) && projects.size < MAX_CHAIN_DEPTH;
  ) {
    let p: apiv1.Project;
    try {
      p = await c.call(c.projects.get.bind(c.projects), { name: next });
    } catch (err) {
      if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) break;
      throw err;
    }
    const project = decodeFromApi('AppProject', {
      name: p.metadata?.name ?? next,
      namespace: p.metadata?.namespace || 'argocd',
      spec: apiv1.ProjectSpec.toJSON(p.spec ?? apiv1.ProjectSpec.fromPartial({})),
    }) as AppProject;
    projects.set(next, project);
    next = project.spec.parentProject;
  }
  return projects;
}

/** Every registered cluster, or when the caller may not list them, just the destination's. */
async function clustersFromApi(c: Connection, app: Application): Promise<ClusterRef[]> {
  const ref = (x: apiv1.Cluster): ClusterRef => ({
    name: x.name,
    server: x.server,
    ...(x.project ? { project: x.project } : {}),
  });
  try {
    return (await c.call(c.clusters.list.bind(c.clusters), {})).items.map(ref);
  } catch (err) {
    if ((err as { code?: number }).code !== grpcStatus.PERMISSION_DENIED) throw err;
  }
  const { server = '', name = '' } = app.spec.destination;
  try {
    return [ref(await c.call(c.clusters.get.bind(c.clusters), { server, name }))];
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === grpcStatus.NOT_FOUND || code === grpcStatus.PERMISSION_DENIED) return [];
    throw err;
  }
}

function parseClusterFlag(value: string): ClusterRef {
  const eq = value.indexOf('=');
  const name = value.slice(0, eq);
  const server = value.slice(eq + 1);
  if (eq <= 0 || server === '') {
    throw new CliError(`--cluster ${JSON.stringify(value)}: expected NAME=SERVER_URL`, EXIT_USAGE);
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(
      `--cluster ${JSON.stringify(value)}: ${JSON.stringify(server)} is not a URL`,
      EXIT_USAGE,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CliError(`--cluster ${JSON.stringify(value)}: the server URL must be http(s)`, EXIT_USAGE);
  }
  return { name, server };
}

function readManifests(paths: string[]): ArgoManifests {
  const out: ArgoManifests = { projects: [], applications: [], clusters: [] };
  const problems: string[] = [];
  for (const file of manifestFiles(paths)) {
    const text = readManifestFile(file);
    try {
      parseArgoManifests(text, file === '-' ? '<stdin>' : file, out);
    } catch (err) {
      if (!(err instanceof ManifestErrors)) throw err;
      problems.push(...err.errors.map((e) => e.message));
    }
  }
  if (problems.length > 0) throw new CliError(`invalid manifests:\n  ${problems.join('\n  ')}`, EXIT_INPUT);
  return out;
}

function findApplication(apps: Application[], ref: string): Application {
  const slash = ref.indexOf('/');
  const namespace = slash >= 0 ? ref.slice(0, slash) : undefined;
  const name = slash >= 0 ? ref.slice(slash + 1) : ref;
  const found = apps.filter(
    (a) =>
      a.metadata.name === name &&
      (namespace === undefined || (a.metadata.namespace ?? 'argocd') === namespace),
  );
  if (found.length === 0) {
    const known =
      apps.map((a) => `${a.metadata.namespace ?? 'argocd'}/${a.metadata.name}`).join(', ') || 'none';
    throw new CliError(
      `Application ${JSON.stringify(ref)} is not in the given files (found: ${known})`,
      EXIT_INPUT,
    );
  }
  if (found.length > 1) {
    throw new CliError(
      `Application ${JSON.stringify(ref)} exists in several namespaces; use --app NAMESPACE/NAME`,
      EXIT_USAGE,
    );
  }
  return found[0]!;
}

function renderTable(d: SyncDecision): string {
  const summary = new Table({ style: { head: [], border: [] }, wordWrap: true, colWidths: [16, 106] });
  const row = (k: string, v: string) => summary.push({ [k]: v });
  row('ALLOWED', d.allowed ? 'yes' : 'NO');
  row('REASON', d.reason);
  row('APPLICATION', `${d.application.namespace}/${d.application.name}`);
  row('PROJECT CHAIN', d.projectChain.join(' -> ') || d.project);
  row(
    'DESTINATION',
    `${d.destination.server ?? '?'}${d.destination.name ? ` (${d.destination.name})` : ''} namespace ${JSON.stringify(d.destination.namespace)}`,
  );
  row('IMPERSONATION', `${d.impersonation ? 'on' : 'off'}${d.strict ? ', strict' : ''}`);
  row(
    'IDENTITY',
    d.identity === 'control-plane' ? 'control-plane credentials of the cluster' : (d.username ?? '-'),
  );
  row(
    'MATCHED RULE',
    d.matchedRule === null
      ? '-'
      : `${d.matchedProject} destinationServiceAccounts[${d.matchedRule}] (server ${JSON.stringify(d.matchedPattern?.server)}, namespace ${JSON.stringify(d.matchedPattern?.namespace)})`,
  );
  row('FALLBACK', d.fallback ?? '-');
  let out = `${summary.toString()}\n`;
  if (d.rules.length > 0) {
    const rules = new Table({
      head: ['PROJECT', '#', 'SERVER', 'NAMESPACE', 'SERVICE ACCOUNT', 'MATCH'],
      style: { head: [], border: [] },
    });
    for (const r of d.rules) {
      const match = r.firstMatch
        ? 'first match'
        : r.serverMatched && r.namespaceMatched
          ? 'matches (shadowed)'
          : r.serverMatched
            ? 'namespace differs'
            : 'server differs';
      rules.push([
        r.project,
        String(r.index),
        r.server,
        JSON.stringify(r.namespace),
        r.defaultServiceAccount,
        match,
      ]);
    }
    out += `\ndestinationServiceAccounts considered:\n${rules.toString()}\n`;
  }
  const checks = new Table({
    head: ['CHECK', 'RESULT', 'DETAIL'],
    style: { head: [], border: [] },
    wordWrap: true,
    colWidths: [24, 8, 90],
  });
  for (const c of d.checks) checks.push([c.check, c.allowed ? 'ok' : 'DENIED', c.reason]);
  out += `\nchecks:\n${checks.toString()}\n`;
  for (const w of d.warnings) out += `warning: ${w}\n`;
  return out;
}
