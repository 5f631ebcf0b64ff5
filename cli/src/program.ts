// The `capstan` command tree. Each command group lives in its own file under commands/ and
// registers itself here; names and flags follow argocd's where argocd has them.
import { Command } from 'commander';
import { syncCommand } from './commands/sync.js';

export function buildProgram(): Command {
  const program = new Command('capstan')
    .description('Capstan: GitOps control plane for multi-tenant Kubernetes')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // command groups are added here, one line each
  program.addCommand(syncCommand());
  return program;
}
