// The story's settings step (issue 20): impersonation is turned on the way every Argo CD operator
// does, with the flat key of argocd-cm, applied with `capstan apply -f`; the sync service (started
// without any impersonation setting) applies it without restart and logs so; `capstan admin
// settings --show-source` shows the value and where it came from.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { capstan } from './capstan-cli.js';
import { detail, done, step } from './progress.js';
import { paths } from './stack.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const APPLIED = 'setting application.sync.impersonation.enabled applied';

/** Waits until the sync service's log says it applied the setting (it reads the settings event). */
async function syncApplied(timeoutS = 30): Promise<void> {
  const log = path.join(paths.logs, 'sync.log');
  const start = Date.now();
  while (Date.now() - start < timeoutS * 1000) {
    const text = await readFile(log, 'utf8').catch(() => '');
    if (text.includes(APPLIED)) {
      detail(`the sync service applied it after ${((Date.now() - start) / 1000).toFixed(1)} s, no restart`);
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the sync service did not apply argocd-cm within ${timeoutS} s (see ${log})`);
}

export async function runSettingsStep(): Promise<void> {
  step(
    'turn impersonation on as Argo CD does: argocd-cm with its flat key, `capstan apply -f argocd-cm.yaml`',
  );
  await capstan(['apply', '-f', path.join(here, 'argocd-cm.yaml')]);
  await syncApplied();
  done();

  step('the settings in force and where each came from: `capstan admin settings --show-source`');
  await capstan(['admin', 'settings', '--show-source']);
  done();
}
