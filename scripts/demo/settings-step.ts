// The story's settings step (issue 20): impersonation is turned on the way every Argo CD operator
// does, with the flat key of argocd-cm, applied with `capstan apply -f`; the sync service (started
// without any impersonation setting) applies it without restart and logs so; `capstan admin
// settings --show-source` shows the value and where it came from.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { capstan } from './capstan-cli.js';
import { detail, done, step } from './progress.js';
import { paths } from './stack.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const APPLIED = 'setting application.sync.impersonation.enabled applied';
/** The story's argocd-cm, as an operator keeps it in git. */
export const argocdCmFile = path.join(here, 'argocd-cm.yaml');

/**
 * `capstan apply -f` of argocd-cm.yaml with more keys: an apply replaces the whole object, as the
 * ConfigMap in Argo CD's namespace is one object, so a chapter adding keys applies them all.
 */
export async function applyArgocdCm(extra: Record<string, string>): Promise<void> {
  const cm = parse(await readFile(argocdCmFile, 'utf8')) as { data: Record<string, string> };
  cm.data = { ...cm.data, ...extra };
  const file = path.join(paths.run, 'argocd-cm.yaml');
  await writeFile(file, stringify(cm));
  await capstan(['apply', '-f', file]);
}

/**
 * `capstan apply -f` of the whole argocd-secret (an apply replaces the object: every chapter's key
 * is in it); the file exists, mode 600, only while the CLI reads it; the api keeps the values sealed.
 */
export async function applyArgocdSecret(data: Record<string, string>): Promise<void> {
  const file = path.join(paths.run, 'argocd-secret.yaml');
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'argocd-secret', namespace: 'argocd' },
    stringData: data,
  };
  await writeFile(file, stringify(secret), { mode: 0o600 });
  try {
    await capstan(['apply', '-f', file]);
  } finally {
    await rm(file, { force: true });
  }
}

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
  await capstan(['apply', '-f', argocdCmFile]);
  await syncApplied();
  done();

  step('the settings in force and where each came from: `capstan admin settings --show-source`');
  await capstan(['admin', 'settings', '--show-source']);
  done();
}
