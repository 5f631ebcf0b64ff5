// Stopping what `npm run up` started, in reverse order of start, and removing .capstan state
// (keys, tokens, kubeconfigs, repositories, caches) except the logs. Shared by `up` (which starts
// from a clean slate) and `down`.
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { capstan } from './capstan-cli.js';
import { isRunning, readRecord, stopRecorded } from './processes.js';
import { components, installation, paths } from './stack.js';

/** Stops every recorded component; returns the names of those that were running. */
export async function stopStack(): Promise<string[]> {
  const api = readRecord('api');
  if (api && isRunning(api)) {
    // Revoke the session the demo's CLI context holds while the api can still hear it.
    await capstan(['logout', installation.context], { quiet: true }).catch(() => undefined);
  }
  const stopped: string[] = [];
  for (const name of [...components].reverse()) if (await stopRecorded(name)) stopped.push(name);
  return stopped;
}

/** Removes everything under .capstan/ but the logs (and whatever else `keep` names). */
export function removeState(keep: string[] = []): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(paths.state);
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(paths.state, entry);
    if (full !== paths.logs && !keep.includes(full)) rmSync(full, { recursive: true, force: true });
  }
}
