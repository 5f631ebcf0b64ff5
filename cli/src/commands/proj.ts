// capstan proj: AppProjects, with argocd proj's commands and flags, plus the self-service fields
// (set-parent, destination service accounts) and project roles for tenants.
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { modify } from './project-edit.js';
import { projRoleCommand } from './proj-role.js';
import { projWindowsCommand } from './proj-windows.js';
import { CliError } from '../errors.js';
import { readManifestObject } from '../input/manifest-files.js';
import { outputOption, printList, printObject, type OutputFormat } from '../output/format.js';
import { managedBy } from '../output/managed-by.js';

const collect = (v: string, prev: string[]) => [...prev, v];

function parseDest(v: string): apiv1.ApplicationDestination {
  const [server, namespace, name] = v.split(',');
  if (!server || namespace === undefined) throw new CliError(`--dest expects server,namespace, got ${v}`);
  return { server, namespace, name: name ?? '' };
}

function parseDsa(v: string): apiv1.DestinationServiceAccount {
  const [server, namespace, defaultServiceAccount] = v.split(',');
  if (!server || namespace === undefined || !defaultServiceAccount)
    throw new CliError(`--dest-service-account expects server,namespace,serviceaccount, got ${v}`);
  return { server, namespace, defaultServiceAccount };
}

function show(o: OutputFormat, p: apiv1.Project): void {
  const s = p.spec;
  printObject(o, apiv1.Project.toJSON(p), [
    ['Name', p.metadata?.name],
    ['Description', s?.description],
    ['Parent Project', s?.parentProject || '<none>'],
    ['Source Repositories', s?.sourceRepos.join(', ') || '<none>'],
    [
      'Destinations',
      s?.destinations.map((d) => `${d.server || d.name},${d.namespace}`).join('; ') || '<none>',
    ],
    [
      'Destination Service Accounts',
      s?.destinationServiceAccounts
        .map((d, i) => `[${i}] ${d.server},${d.namespace} -> ${d.defaultServiceAccount}`)
        .join('; ') || '<none>',
    ],
    [
      'Cluster Resources Allowed',
      s?.clusterResourceWhitelist.map((g) => `${g.group || '""'}/${g.kind}`).join(', ') || '<none>',
    ],
    [
      'Namespace Resources Denied',
      s?.namespaceResourceBlacklist.map((g) => `${g.group || '""'}/${g.kind}`).join(', ') || '<none>',
    ],
    [
      'Sync Windows',
      s?.syncWindows.map((w, i) => `[${i}] ${w.kind} "${w.schedule}" ${w.duration}`).join('; ') || '<none>',
    ],
    ['Roles', s?.roles.map((r) => `${r.name} (groups: ${r.groups.join(',') || '-'})`).join('; ') || '<none>'],
    ['Managed By', managedBy(p.metadata?.annotations)],
    ['Resource Version', p.metadata?.resourceVersion],
  ]);
}

/** A `proj` subcommand that changes one list of the spec: its arguments, the change, what it says when done. */
interface SpecEdit {
  name: string;
  description: string;
  args: string[];
  change: (spec: apiv1.ProjectSpec, values: string[]) => void;
  done: (project: string, values: string[]) => string;
}

const sameGk = (g: apiv1.GroupKind, group: string, kind: string) => g.group === group && g.kind === kind;

const specEdits: SpecEdit[] = [
  {
    name: 'add-source',
    description: 'permit a source repository (glob)',
    args: ['url'],
    change: (s, [url]) => {
      if (!s.sourceRepos.includes(url!)) s.sourceRepos.push(url!);
    },
    done: (p, [url]) => `source ${url} added to project '${p}'`,
  },
  {
    name: 'remove-source',
    description: 'stop permitting a source repository',
    args: ['url'],
    change: (s, [url]) => {
      const i = s.sourceRepos.indexOf(url!);
      if (i < 0) throw new CliError(`project has no source ${url}`);
      s.sourceRepos.splice(i, 1);
    },
    done: (p, [url]) => `source ${url} removed from project '${p}'`,
  },
  {
    name: 'allow-cluster-resource',
    description: 'permit a cluster-scoped group/kind (use "" for the core group)',
    args: ['group', 'kind'],
    change: (s, [group, kind]) => {
      if (!s.clusterResourceWhitelist.some((g) => sameGk(g, group!, kind!)))
        s.clusterResourceWhitelist.push({ group: group!, kind: kind! });
    },
    done: (p, [group, kind]) => `cluster resource ${group || '""'}/${kind} allowed in project '${p}'`,
  },
  {
    name: 'deny-cluster-resource',
    description: 'stop permitting a cluster-scoped group/kind',
    args: ['group', 'kind'],
    change: (s, [group, kind]) => {
      s.clusterResourceWhitelist = s.clusterResourceWhitelist.filter((g) => !sameGk(g, group!, kind!));
    },
    done: (p, [group, kind]) => `cluster resource ${group || '""'}/${kind} denied in project '${p}'`,
  },
  {
    name: 'deny-namespace-resource',
    description: 'deny a namespaced group/kind',
    args: ['group', 'kind'],
    change: (s, [group, kind]) => {
      if (!s.namespaceResourceBlacklist.some((g) => sameGk(g, group!, kind!)))
        s.namespaceResourceBlacklist.push({ group: group!, kind: kind! });
    },
    done: (p, [group, kind]) => `namespace resource ${group || '""'}/${kind} denied in project '${p}'`,
  },
  {
    name: 'allow-namespace-resource',
    description: 'remove a namespaced group/kind from the deny list',
    args: ['group', 'kind'],
    change: (s, [group, kind]) => {
      s.namespaceResourceBlacklist = s.namespaceResourceBlacklist.filter((g) => !sameGk(g, group!, kind!));
    },
    done: (p, [group, kind]) => `namespace resource ${group || '""'}/${kind} allowed in project '${p}'`,
  },
];

function specEditCommand(edit: SpecEdit): Command {
  const cmd = new Command(edit.name).description(edit.description).argument('<project>');
  for (const a of edit.args) cmd.argument(`<${a}>`);
  return cmd.action((project: string, ...rest: unknown[]) => {
    const values = rest.slice(0, edit.args.length) as string[];
    const command = rest.at(-1) as Command;
    return withConnection(command, async (c) => {
      await modify(c, project, (spec) => edit.change(spec, values));
      process.stdout.write(`${edit.done(project, values)}\n`);
    });
  });
}

export function projCommand(): Command {
  const proj = new Command('proj').description('manage AppProjects');
  proj.addCommand(projCreateCommand());
  proj.addCommand(projGetCommand());
  proj.addCommand(projListCommand());
  proj.addCommand(projDeleteCommand());
  proj.addCommand(projAddDestinationCommand());
  proj.addCommand(projRemoveDestinationCommand());
  proj.addCommand(projAddDestinationServiceAccountCommand());
  proj.addCommand(projRemoveDestinationServiceAccountCommand());
  proj.addCommand(projSetParentCommand());

  for (const edit of specEdits) proj.addCommand(specEditCommand(edit));
  proj.addCommand(projRoleCommand());
  proj.addCommand(projWindowsCommand());
  return proj;
}

function projCreateCommand(): Command {
  return new Command('create')
    .description('create an AppProject from flags or an Argo CD manifest (-f)')
    .argument('[name]')
    .option('-f, --file <path>', 'AppProject manifest (YAML or JSON)')
    .option('--description <text>', 'description', '')
    .option('-s, --src <repo>', 'permitted source repository (repeatable)', collect, [])
    .option('-d, --dest <server,namespace>', 'permitted destination (repeatable)', collect, [])
    .option(
      '--dest-service-account <server,namespace,sa>',
      'destination service account rule, in order (repeatable)',
      collect,
      [],
    )
    .option(
      '--parent <project>',
      'parent project bounding this one (required unless you are an admin; needs get on it)',
      '',
    )
    .option('--upsert', 'update the project if it exists')
    .addOption(outputOption())
    .action(
      (
        name: string | undefined,
        o: {
          file?: string;
          description: string;
          src: string[];
          dest: string[];
          destServiceAccount: string[];
          parent: string;
          upsert?: boolean;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          let project: apiv1.Project;
          if (o.file) {
            project = apiv1.Project.fromJSON(readManifestObject(o.file));
            if (name && project.metadata) project.metadata.name = name;
          } else {
            if (!name) throw new CliError('a project name or -f is required');
            project = apiv1.Project.fromPartial({
              metadata: { name },
              spec: {
                description: o.description,
                sourceRepos: o.src,
                destinations: o.dest.map(parseDest),
                destinationServiceAccounts: o.destServiceAccount.map(parseDsa),
                parentProject: o.parent,
              },
            });
          }
          show(o.output, await c.call(c.projects.create.bind(c.projects), { project, upsert: !!o.upsert }));
        }),
    );
}

function projGetCommand(): Command {
  return new Command('get')
    .description('show an AppProject')
    .argument('<name>')
    .addOption(outputOption())
    .action((name: string, o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) =>
        show(o.output, await c.call(c.projects.get.bind(c.projects), { name })),
      ),
    );
}

function projListCommand(): Command {
  return new Command('list')
    .description('list AppProjects')
    .addOption(outputOption())
    .action((o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.projects.list.bind(c.projects), {});
        printList(
          o.output,
          r.items,
          [
            ['NAME', (p) => p.metadata?.name],
            ['DESCRIPTION', (p) => p.spec?.description],
            ['PARENT', (p) => p.spec?.parentProject],
            [
              'DESTINATIONS',
              (p) => p.spec?.destinations.map((d) => `${d.server || d.name},${d.namespace}`).join(', '),
            ],
            ['SERVICE ACCOUNTS', (p) => p.spec?.destinationServiceAccounts.length ?? 0],
          ],
          (p) => apiv1.Project.toJSON(p),
          (p) => p.metadata?.name ?? '',
        );
      }),
    );
}

function projDeleteCommand(): Command {
  return new Command('delete')
    .description('delete an AppProject')
    .argument('<name>')
    .action((name: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await c.call(c.projects.delete.bind(c.projects), { name });
        process.stdout.write(`project '${name}' deleted\n`);
      }),
    );
}

function projAddDestinationCommand(): Command {
  return new Command('add-destination')
    .description('permit a destination')
    .argument('<project>')
    .argument('<server>')
    .argument('<namespace>')
    .option('--name', 'the server argument is a cluster name')
    .action((project: string, server: string, namespace: string, o: { name?: boolean }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) =>
          s.destinations.push(
            o.name ? { server: '', name: server, namespace } : { server, name: '', namespace },
          ),
        );
        process.stdout.write(`destination ${server},${namespace} added to project '${project}'\n`);
      }),
    );
}

function projRemoveDestinationCommand(): Command {
  return new Command('remove-destination')
    .description('stop permitting a destination')
    .argument('<project>')
    .argument('<server>')
    .argument('<namespace>')
    .action((project: string, server: string, namespace: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          const i = s.destinations.findIndex(
            (d) => (d.server === server || d.name === server) && d.namespace === namespace,
          );
          if (i < 0) throw new CliError(`project '${project}' has no destination ${server},${namespace}`);
          s.destinations.splice(i, 1);
        });
        process.stdout.write(`destination ${server},${namespace} removed from project '${project}'\n`);
      }),
    );
}

function projAddDestinationServiceAccountCommand(): Command {
  return new Command('add-destination-service-account')
    .description(
      'add a destinationServiceAccounts rule (first match wins; under a parent, only what the parent chain resolves)',
    )
    .argument('<project>')
    .argument('<server>')
    .argument('<namespace>')
    .argument('<serviceaccount>', 'name or namespace:name')
    .option('--index <n>', 'insert at this position instead of the end')
    .action(
      (project: string, server: string, namespace: string, sa: string, o: { index?: string }, cmd: Command) =>
        withConnection(cmd, async (c) => {
          await modify(c, project, (s) => {
            const rule = { server, namespace, defaultServiceAccount: sa };
            if (o.index === undefined) s.destinationServiceAccounts.push(rule);
            else s.destinationServiceAccounts.splice(Number(o.index), 0, rule);
          });
          process.stdout.write(
            `destination service account ${server},${namespace} -> ${sa} added to project '${project}'\n`,
          );
        }),
    );
}

function projRemoveDestinationServiceAccountCommand(): Command {
  return new Command('remove-destination-service-account')
    .description('remove the destinationServiceAccounts rule for a server and namespace')
    .argument('<project>')
    .argument('<server>')
    .argument('<namespace>')
    .action((project: string, server: string, namespace: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          const i = s.destinationServiceAccounts.findIndex(
            (d) => d.server === server && d.namespace === namespace,
          );
          if (i < 0)
            throw new CliError(
              `project '${project}' has no destination service account for ${server},${namespace}`,
            );
          s.destinationServiceAccounts.splice(i, 1);
        });
        process.stdout.write(
          `destination service account ${server},${namespace} removed from project '${project}'\n`,
        );
      }),
    );
}

function projSetParentCommand(): Command {
  return new Command('set-parent')
    .description(
      'bound a project by a parent project (needs update on the old and the new parent); "" removes the parent (admins only)',
    )
    .argument('<project>')
    .argument('<parent>')
    .action((project: string, parent: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          s.parentProject = parent;
        });
        process.stdout.write(
          parent
            ? `project '${project}' now has parent '${parent}'\n`
            : `project '${project}' has no parent\n`,
        );
      }),
    );
}
