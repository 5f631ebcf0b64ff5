// Where a generated bootstrap admin password goes: a file readable only by the api's user (mode 600,
// in a directory of mode 700), like Argo CD's argocd-initial-admin-secret; never stdout, stderr or the
// logger, so container logs cannot keep it. Written atomically (temporary file, then rename) so a
// reader never sees half a password.
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import type { Logger } from '@capstan/service';
import type { AccountsService } from './accounts.service.js';

/** `$XDG_STATE_HOME/capstan/api/initial-admin-password` (XDG default `~/.local/state`). */
export function defaultInitialAdminPasswordFile(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || path.join(homedir(), '.local', 'state');
  return path.join(state, 'capstan', 'api', 'initial-admin-password');
}

export async function writeInitialAdminPassword(file: string, password: string): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.chmod(0o600); // in case a stale temporary file had another mode
    await handle.writeFile(`${password}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await chmod(file, 0o600);
}

export async function removeInitialAdminPassword(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * The bootstrap admin account at start: with the configured password, or a generated one kept only
 * in the file (removed again once the admin has changed it).
 */
export async function bootstrapAdminAccount(
  accounts: AccountsService,
  config: { adminPassword: string; initialAdminPasswordFile?: string },
  logger: Logger,
): Promise<void> {
  const passwordFile = config.initialAdminPasswordFile || defaultInitialAdminPasswordFile();
  const admin = await accounts.bootstrapAdmin(config.adminPassword, {
    keep: async (password) => {
      try {
        await writeInitialAdminPassword(passwordFile, password);
      } catch (err) {
        throw new Error(
          `cannot write the generated admin password to ${passwordFile} (${(err as NodeJS.ErrnoException).code ?? 'error'}): set auth.initial-admin-password-file to a writable path, or auth.admin-password`,
          { cause: err },
        );
      }
    },
    discard: () => removeInitialAdminPassword(passwordFile),
  });
  if (admin.generated) {
    // Only where it is: the value itself never reaches a log, stdout or stderr.
    logger.warn(
      { file: passwordFile },
      'created the bootstrap admin account; its generated password is in the file (mode 600): log in as admin, change it (capstan account update-password), then delete the file',
    );
  } else if (admin.created) {
    logger.info('created the bootstrap admin account with the configured password');
  }
}
