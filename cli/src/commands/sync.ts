// `capstan sync explain`: which identity a sync would use and why, computed by the very function
// the sync service calls (explainSync from @capstan/policy).
//
// The offline form is a contract other tools script against; keep it exactly:
//   capstan sync explain --offline -f FILE [-f FILE …] --app NAME [--impersonation on|off]
//     [--strict] [--cluster NAME=SERVER_URL …] -o json
// prints one JSON object with at least allowed, impersonation, username, serviceAccount,
// matchedRule, fallback and reason. A refusal is `allowed: false` with exit status 0; usage errors
// exit 2, unreadable or invalid files exit 1.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import Table from 'cli-table3';
import {
  ClusterDirectory,
  explainSync,
  ManifestErrors,
  parseArgoManifests,
  type Application,
  type ArgoManifests,
  type ClusterRef,
  type SyncDecision,
} from '@capstan/policy';

const EXIT_INPUT = 1;
const EXIT_USAGE = 2;

/** A problem with how the command was called or with what it was given; never a refusal. */
class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

interface ExplainOptions {
  offline?: boolean;
  file: string[];
  app?: string;
  impersonation: 'on' | 'off';
  strict?: boolean;
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
    .option('--offline', 'decide from the given files only, with no server running')
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
    .action((opts: ExplainOptions) => {
      try {
        const decision = explainOffline(opts);
        process.stdout.write(
          opts.output === 'json' ? `${JSON.stringify(decision, null, 2)}\n` : renderTable(decision),
        );
      } catch (err) {
        if (!(err instanceof CommandError)) throw err;
        process.stderr.write(`error: ${err.message}\n`);
        process.exitCode = err.exitCode;
      }
    });
  return sync;
}

function explainOffline(opts: ExplainOptions): SyncDecision {
  if (!opts.offline) {
    // TODO(api): online mode asks the api for the decision by Application name, once the api serves it.
    throw new CommandError('online mode is not available yet: pass --offline with -f FILE', EXIT_USAGE);
  }
  if (opts.file.length === 0) throw new CommandError('--offline needs at least one -f FILE', EXIT_USAGE);
  if (!opts.app) throw new CommandError('--app NAME is required', EXIT_USAGE);
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
  });
}

function parseClusterFlag(value: string): ClusterRef {
  const eq = value.indexOf('=');
  const name = value.slice(0, eq);
  const server = value.slice(eq + 1);
  if (eq <= 0 || server === '') {
    throw new CommandError(`--cluster ${JSON.stringify(value)}: expected NAME=SERVER_URL`, EXIT_USAGE);
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CommandError(
      `--cluster ${JSON.stringify(value)}: ${JSON.stringify(server)} is not a URL`,
      EXIT_USAGE,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CommandError(`--cluster ${JSON.stringify(value)}: the server URL must be http(s)`, EXIT_USAGE);
  }
  return { name, server };
}

function filesOf(path: string): string[] {
  if (path === '-') return [path];
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    throw new CommandError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      EXIT_INPUT,
    );
  }
  if (!isDir) return [path];
  return readdirSync(path)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

function readManifests(paths: string[]): ArgoManifests {
  const out: ArgoManifests = { projects: [], applications: [], clusters: [] };
  const problems: string[] = [];
  for (const file of paths.flatMap(filesOf)) {
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (err) {
      throw new CommandError(
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        EXIT_INPUT,
      );
    }
    try {
      parseArgoManifests(text, file === '-' ? '<stdin>' : file, out);
    } catch (err) {
      if (!(err instanceof ManifestErrors)) throw err;
      problems.push(...err.errors.map((e) => e.message));
    }
  }
  if (problems.length > 0)
    throw new CommandError(`invalid manifests:\n  ${problems.join('\n  ')}`, EXIT_INPUT);
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
    throw new CommandError(
      `Application ${JSON.stringify(ref)} is not in the given files (found: ${known})`,
      EXIT_INPUT,
    );
  }
  if (found.length > 1) {
    throw new CommandError(
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
