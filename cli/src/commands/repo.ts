// capstan repo: repository credentials (held by the repo service), with argocd repo's commands.
// Several credentials may share a URL, one per project: get and rm take --project to choose.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { secret } from '../config/secret-input.js';
import { outputOption, printList, printObject, type OutputFormat } from '../output/format.js';

function show(o: OutputFormat, r: apiv1.Repository): void {
  printObject(o, apiv1.Repository.toJSON(r), [
    ['Repository', r.repo],
    ['Project', r.project || '<unscoped>'],
    ['Type', r.type],
    ['Username', r.username],
    ['Password', r.hasPassword ? '(stored)' : '<none>'],
    ['SSH Key', r.hasSshPrivateKey ? '(stored)' : '<none>'],
    ['Secret Name', r.secretName],
  ]);
}

export function repoCommand(): Command {
  const repo = new Command('repo').description('manage repository credentials');
  repo.addCommand(repoAddCommand());
  repo.addCommand(repoGetCommand());
  repo.addCommand(repoListCommand());
  repo.addCommand(repoRmCommand());
  return repo;
}

function repoAddCommand(): Command {
  return new Command('add')
    .description('add a repository credential (password from stdin or CAPSTAN_REPO_PASSWORD)')
    .argument('<url>')
    .option('--project <name>', 'scope the credential to a project', '')
    .option('--username <name>', 'username', '')
    .option('--password-stdin', 'read the password from stdin')
    .option('--ssh-private-key-path <file>', 'SSH private key file')
    .option('--type <type>', 'git or helm', 'git')
    .option('--name <name>', 'display name', '')
    .option('--insecure-skip-server-verification', 'do not verify the server certificate')
    .option('--enable-oci', 'the Helm repository is an OCI registry (Argo CD enableOCI)')
    .option('--insecure-oci-force-http', 'reach the OCI registry over plain HTTP')
    .option('--upsert', 'replace the credential of the same URL and project')
    .addOption(outputOption())
    .action(
      (
        url: string,
        o: {
          project: string;
          username: string;
          passwordStdin?: boolean;
          sshPrivateKeyPath?: string;
          type: string;
          name: string;
          insecureSkipServerVerification?: boolean;
          upsert?: boolean;
          enableOci?: boolean;
          insecureOciForceHttp?: boolean;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const password = o.username
            ? await secret({ stdin: o.passwordStdin, env: 'CAPSTAN_REPO_PASSWORD', prompt: 'Password: ' })
            : '';
          const sshPrivateKey = o.sshPrivateKeyPath ? readFileSync(o.sshPrivateKeyPath, 'utf8') : '';
          const r = await c.call(c.repositories.create.bind(c.repositories), {
            repo: url,
            project: o.project,
            type: o.type,
            name: o.name,
            username: o.username,
            password,
            sshPrivateKey,
            insecure: !!o.insecureSkipServerVerification,
            upsert: !!o.upsert,
            enableOci: !!o.enableOci,
            insecureOciForceHttp: !!o.insecureOciForceHttp,
          });
          show(o.output, r);
        }),
    );
}

function repoGetCommand(): Command {
  return new Command('get')
    .description('show a repository credential')
    .argument('<url>')
    .option('--project <name>', 'choose among credentials sharing the URL', '')
    .addOption(outputOption())
    .action((url: string, o: { project: string; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) =>
        show(
          o.output,
          await c.call(c.repositories.get.bind(c.repositories), { repo: url, project: o.project }),
        ),
      ),
    );
}

function repoListCommand(): Command {
  return new Command('list')
    .description('list repository credentials')
    .option('--project <name>', 'only this project', '')
    .addOption(outputOption())
    .action((o: { project: string; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.repositories.list.bind(c.repositories), { project: o.project });
        printList(
          o.output,
          r.items,
          [
            ['REPO', (x) => x.repo],
            ['PROJECT', (x) => x.project],
            ['TYPE', (x) => x.type],
            ['USER', (x) => x.username],
            ['NAME', (x) => x.secretName],
          ],
          (x) => apiv1.Repository.toJSON(x),
          (x) => x.repo,
        );
      }),
    );
}

function repoRmCommand(): Command {
  return new Command('rm')
    .description('remove a repository credential')
    .argument('<url>')
    .option('--project <name>', 'choose among credentials sharing the URL', '')
    .action((url: string, o: { project: string }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await c.call(c.repositories.delete.bind(c.repositories), { repo: url, project: o.project });
        process.stdout.write(`repository '${url}'${o.project ? ` (project ${o.project})` : ''} removed\n`);
      }),
    );
}
