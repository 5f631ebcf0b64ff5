// capstan proj role: AppProject roles, the RBAC tenants get within their project (argocd proj role).
import { Command } from 'commander';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { modify } from './project-edit.js';
import { addTokenCommands } from './proj-role-tokens.js';

export function projRoleCommand(): Command {
  const role = new Command('role').description('manage project roles (RBAC for tenants)');
  role
    .command('create')
    .argument('<project>')
    .argument('<role>')
    .option('--description <text>', '', '')
    .action((project: string, name: string, o: { description: string }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          if (s.roles.some((r) => r.name === name))
            throw new CliError(`role '${name}' already exists in project '${project}'`);
          s.roles.push({ name, description: o.description, policies: [], groups: [] });
        });
        process.stdout.write(`role '${name}' created in project '${project}'\n`);
      }),
    );
  role
    .command('add-policy')
    .argument('<project>')
    .argument('<role>')
    .requiredOption('-a, --action <action>', 'get, create, update, delete, sync, or *')
    .option('-p, --permission <effect>', 'allow or deny', 'allow')
    .option('-o, --object <object>', 'application name or glob within the project', '*')
    .option('-r, --resource <resource>', 'applications or applicationsets', 'applications')
    .action(
      (
        project: string,
        name: string,
        o: { action: string; permission: string; object: string; resource: string },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          await modify(c, project, (s) => {
            const r = s.roles.find((x) => x.name === name);
            if (!r) throw new CliError(`project '${project}' has no role '${name}'`);
            r.policies.push(
              `p, proj:${project}:${name}, ${o.resource}, ${o.action}, ${project}/${o.object}, ${o.permission}`,
            );
          });
          process.stdout.write(`policy added to role '${name}' of project '${project}'\n`);
        }),
    );
  role
    .command('add-group')
    .argument('<project>')
    .argument('<role>')
    .argument('<group>')
    .action((project: string, name: string, group: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          const r = s.roles.find((x) => x.name === name);
          if (!r) throw new CliError(`project '${project}' has no role '${name}'`);
          if (!r.groups.includes(group)) r.groups.push(group);
        });
        process.stdout.write(`group '${group}' bound to role '${name}' of project '${project}'\n`);
      }),
    );
  addTokenCommands(role);
  return role;
}
