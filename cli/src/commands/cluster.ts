// capstan cluster: target clusters and their control-plane credentials (stored encrypted by the api,
// never shown again). Credentials come from files or a kubeconfig, never from argv.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { parse } from 'yaml';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printList, printObject, type OutputFormat } from '../output/format.js';

interface KubeConfig {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server: string;
      'certificate-authority-data'?: string;
      'certificate-authority'?: string;
      'insecure-skip-tls-verify'?: boolean;
    };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      'client-certificate-data'?: string;
      'client-key-data'?: string;
      'client-certificate'?: string;
      'client-key'?: string;
      username?: string;
      password?: string;
    };
  }[];
}

const b64 = (s?: string) => (s ? Buffer.from(s, 'base64').toString('utf8') : '');
const file = (p?: string) => (p ? readFileSync(p, 'utf8') : '');

/** The server and credential of a kubeconfig context, as argocd cluster add reads them. */
export function fromKubeconfig(
  path: string,
  contextName?: string,
): { server: string; config: apiv1.ClusterConfig } {
  const kc = parse(readFileSync(path, 'utf8')) as KubeConfig;
  const name = contextName || kc['current-context'];
  const ctx = kc.contexts?.find((c) => c.name === name);
  if (!ctx) throw new CliError(`kubeconfig ${path} has no context ${name}`);
  const cluster = kc.clusters?.find((c) => c.name === ctx.context.cluster)?.cluster;
  const user = kc.users?.find((u) => u.name === ctx.context.user)?.user;
  if (!cluster) throw new CliError(`kubeconfig ${path}: context ${name} names an unknown cluster`);
  return {
    server: cluster.server,
    config: apiv1.ClusterConfig.fromPartial({
      bearerToken: user?.token ?? '',
      username: user?.username ?? '',
      password: user?.password ?? '',
      tlsClientConfig: {
        insecure: !!cluster['insecure-skip-tls-verify'],
        caData: b64(cluster['certificate-authority-data']) || file(cluster['certificate-authority']),
        certData: b64(user?.['client-certificate-data']) || file(user?.['client-certificate']),
        keyData: b64(user?.['client-key-data']) || file(user?.['client-key']),
      },
    }),
  };
}

function show(o: OutputFormat, c: apiv1.Cluster): void {
  printObject(o, apiv1.Cluster.toJSON(c), [
    ['Server', c.server],
    ['Name', c.name],
    ['Project', c.project || '<none>'],
    ['Namespaces', c.namespaces.join(', ') || '<all>'],
    ['Credential', `${c.credentialType} (sealed with key ${c.credentialKeyId})`],
    ['Insecure', c.insecure],
  ]);
}

export function clusterCommand(): Command {
  const cluster = new Command('cluster').description('manage target clusters');
  cluster.addCommand(clusterAddCommand());
  cluster.addCommand(clusterGetCommand());
  cluster.addCommand(clusterListCommand());
  cluster.addCommand(clusterRmCommand());
  return cluster;
}

function clusterAddCommand(): Command {
  return new Command('add')
    .description(
      'register a target cluster: from a kubeconfig context, or a server URL with credential files',
    )
    .argument('[server]', 'API server URL (omit with --kubeconfig)')
    .option('--kubeconfig <file>', 'read server and credentials from this kubeconfig')
    .option('--kube-context <name>', 'kubeconfig context (default: current)')
    .option('--name <name>', 'cluster name', '')
    .option('--bearer-token-file <file>', 'file holding a bearer token')
    .option('--ca-file <file>', 'PEM certificate authority')
    .option('--cert-file <file>', 'PEM client certificate')
    .option('--key-file <file>', 'PEM client key')
    .option('--insecure', 'skip TLS verification')
    .option(
      '--namespace <ns>',
      'restrict to these namespaces (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option('--project <name>', 'project-scoped cluster', '')
    .option('--label <k=v>', 'label (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .option('--upsert', 'update the cluster if it exists')
    .addOption(outputOption())
    .action(
      (
        server: string | undefined,
        o: {
          kubeconfig?: string;
          kubeContext?: string;
          name: string;
          bearerTokenFile?: string;
          caFile?: string;
          certFile?: string;
          keyFile?: string;
          insecure?: boolean;
          namespace: string[];
          project: string;
          label: string[];
          upsert?: boolean;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          let target = server ?? '';
          let config: apiv1.ClusterConfig;
          if (o.kubeconfig) {
            const kc = fromKubeconfig(o.kubeconfig, o.kubeContext);
            target = server || kc.server;
            config = kc.config;
          } else {
            if (!target) throw new CliError('a server URL or --kubeconfig is required');
            config = apiv1.ClusterConfig.fromPartial({
              bearerToken: o.bearerTokenFile ? readFileSync(o.bearerTokenFile, 'utf8').trim() : '',
              tlsClientConfig: {
                insecure: !!o.insecure,
                caData: file(o.caFile),
                certData: file(o.certFile),
                keyData: file(o.keyFile),
              },
            });
          }
          if (o.insecure && config.tlsClientConfig) config.tlsClientConfig.insecure = true;
          const labels = Object.fromEntries(o.label.map((l) => l.split('=', 2) as [string, string]));
          const res = await c.call(
            c.clusters.create.bind(c.clusters),
            apiv1.ClusterCreateRequest.fromPartial({
              server: target,
              name: o.name,
              config,
              namespaces: o.namespace,
              project: o.project,
              labels,
              upsert: !!o.upsert,
            }),
          );
          show(o.output, res);
        }),
    );
}

function clusterGetCommand(): Command {
  return new Command('get')
    .argument('<server-or-name>')
    .addOption(outputOption())
    .action((id: string, o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) =>
        show(o.output, await c.call(c.clusters.get.bind(c.clusters), { server: id, name: '' })),
      ),
    );
}

function clusterListCommand(): Command {
  return new Command('list').addOption(outputOption()).action((o: { output: OutputFormat }, cmd: Command) =>
    withConnection(cmd, async (c) => {
      const r = await c.call(c.clusters.list.bind(c.clusters), {});
      printList(
        o.output,
        r.items,
        [
          ['SERVER', (x) => x.server],
          ['NAME', (x) => x.name],
          ['PROJECT', (x) => x.project],
          ['CREDENTIAL', (x) => x.credentialType],
        ],
        (x) => apiv1.Cluster.toJSON(x),
        (x) => x.name,
      );
    }),
  );
}

function clusterRmCommand(): Command {
  return new Command('rm').argument('<server-or-name>').action((id: string, _o: unknown, cmd: Command) =>
    withConnection(cmd, async (c) => {
      await c.call(c.clusters.delete.bind(c.clusters), { server: id, name: '' });
      process.stdout.write(`cluster '${id}' removed\n`);
    }),
  );
}
