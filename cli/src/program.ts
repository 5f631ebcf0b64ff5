// The `capstan` command tree. Each command group lives in its own file under commands/ and
// registers itself here; names and flags follow argocd's where argocd has them.
import { Command } from 'commander';
import { syncCommand } from './commands/sync.js';
import { contextCommand, loginCommand, logoutCommand } from './commands/login.js';
import { accountCommand } from './commands/account.js';
import { projCommand } from './commands/proj.js';
import { appCommand } from './commands/app.js';
import { repoCommand } from './commands/repo.js';
import { clusterCommand } from './commands/cluster.js';
import { applyCommand } from './commands/apply.js';
import { appsetCommand } from './commands/appset.js';
import { auditCommand } from './commands/audit.js';
import { adminCommand } from './commands/admin.js';
import { completionCommand } from './commands/completion.js';

export function buildProgram(): Command {
  const program = new Command('capstan')
    .description('Capstan: GitOps control plane for multi-tenant Kubernetes')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .option('--server <host:port>', 'api gRPC address (default: the current context; or CAPSTAN_SERVER)')
    .option('--config <path>', 'contexts file (default: ~/.config/capstan/config; or CAPSTAN_CONFIG)')
    .option('--context <name>', 'use this context instead of the current one')
    .option(
      '--server-crt <file>',
      "CA certificate that signs the api's TLS certificate (or CAPSTAN_SERVER_CRT); without one the connection is plaintext",
    );
  // command groups are added here, one line each
  program.addCommand(syncCommand());
  program.addCommand(loginCommand());
  program.addCommand(logoutCommand());
  program.addCommand(contextCommand());
  program.addCommand(accountCommand());
  program.addCommand(projCommand());
  program.addCommand(appCommand());
  program.addCommand(repoCommand());
  program.addCommand(clusterCommand());
  program.addCommand(appsetCommand());
  program.addCommand(applyCommand());
  program.addCommand(auditCommand());
  program.addCommand(adminCommand());
  program.addCommand(completionCommand(buildProgram));
  return program;
}
