// capstan admin: operator commands of the control plane (admins only): the settings in force and
// their validation (admin-settings.ts), the services' dead letters (admin-dlq.ts).
import { Command } from 'commander';
import { adminSettingsCommand } from './admin-settings.js';
import { adminDlqCommand } from './admin-dlq.js';

export function adminCommand(): Command {
  return new Command('admin')
    .description('administration of the control plane (admins only)')
    .addCommand(adminSettingsCommand())
    .addCommand(adminDlqCommand());
}
