// `capstan appset generate --offline` as a user runs it: the CLI in a child process, a real file, stdout and
// the exit status (it needs no server: the engine and its Go template module run in-process).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
// The sources through tsx, so the test never runs a stale dist/.
const main = fileURLToPath(new URL('../main.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'capstan-appset-'));

async function capstan(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', main, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const set = (generators: string) => `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
${generators}
  template:
    metadata:
      name: '{{ .cluster | lower }}-guestbook'
    spec:
      project: default
      source:
        repoURL: https://github.com/argoproj/argo-cd.git
        targetRevision: HEAD
        path: guestbook
      destination:
        server: '{{ .url }}'
        namespace: guestbook
`;

describe('capstan appset generate --offline', () => {
  it('prints the generated Applications as a JSON array sorted by name', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(
      file,
      set(`  - matrix:
      generators:
        - list:
            elements: [{ cluster: Prod, url: "https://1.2.3.4" }, { cluster: Dev, url: "https://5.6.7.8" }]
        - list:
            elements: [{ region: eu }]`),
    );
    const r = await capstan('appset', 'generate', file, '--offline', '-o', 'json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const apps = JSON.parse(r.stdout) as {
      metadata: { name: string };
      spec: { destination: { server: string } };
    }[];
    expect(apps.map((a) => [a.metadata.name, a.spec.destination.server])).toEqual([
      ['dev-guestbook', 'https://5.6.7.8'],
      ['prod-guestbook', 'https://1.2.3.4'],
    ]);
    expect(apps[0]).toMatchObject({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { namespace: 'argocd', finalizers: ['resources-finalizer.argocd.argoproj.io'] },
    });
  });

  it("exits non-zero with Argo's error message", async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, set(`  - list:\n      elements: [{ cluster: a }]`));
    const r = await capstan('appset', 'generate', file, '--offline');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'error: spec.template: failed to execute go template {{ .url }}: template: :1:3: executing "" at <.url>: map has no entry for key "url"\n',
    );
  });
});
