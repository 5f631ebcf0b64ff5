// `capstan appset` as a user runs it: the CLI in a child process, real files, stdout, stderr and the
// exit status. `generate --offline` needs no server (the engine and its Go template module run
// in-process); the other cases fail before any server is needed, which the empty contexts file proves:
// had the CLI tried to connect, it would have said `no server` instead.
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
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', main, ...args], {
      env: { ...process.env, CAPSTAN_CONFIG: join(dir, 'no-contexts'), CAPSTAN_SERVER: '' },
    });
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

describe('capstan appset: input refused before anything is sent', () => {
  it('delete without --yes on a non-terminal stdin refuses, naming what it would delete', async () => {
    const r = await capstan('appset', 'delete', 'guestbook', 'team-a/addons');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      "error: refusing to delete 'guestbook', 'team-a/addons' and their Applications without confirmation: stdin is not a terminal (pass --yes)\n",
    );
    // With --yes it goes on to the server (here: none is configured).
    const yes = await capstan('appset', 'delete', 'guestbook', '--yes');
    expect(yes.stderr).toMatch(/^error: no server/);
  });

  it('create names the file and document of a bad document, and creates nothing before it', async () => {
    const good = join(dir, 'good.yaml');
    const mixed = join(dir, 'mixed.yaml');
    writeFileSync(good, set(`  - list:\n      elements: [{ cluster: a, url: u }]`));
    writeFileSync(
      mixed,
      `${set(`  - list:\n      elements: []`).replace('name: guestbook', 'name: other')}---\nkind: Application\nmetadata: {name: x}\nspec: {}\n`,
    );
    const r = await capstan('appset', 'create', good, mixed, '--upsert');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error: ${mixed} (document 2): kind: expected ApplicationSet, found "Application"\n`,
    );
  });

  it('generate takes exactly one ApplicationSet', async () => {
    const two = join(dir, 'two.yaml');
    writeFileSync(
      two,
      `${set('  - list: {elements: []}')}---\n${set('  - list: {elements: []}').replace('name: guestbook', 'name: b')}`,
    );
    const r = await capstan('appset', 'generate', two, '--offline');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: ${two}: expected one ApplicationSet, found 2 documents\n`);
  });
});
