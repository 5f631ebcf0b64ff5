// The `capstan appset` chapter of an end-to-end story, for a story that has the real api and appset
// services running (issue 11): a tenant previews a set (generate, with a verdict on each Application),
// dry-runs it, applies it (created, then unchanged), reads it back (get, list), is refused an edit
// that reaches outside their rights (every refused Application named, nothing changed), and deletes it
// (refused without --yes when there is no terminal). The story owns the stack, the tenant's context and
// the manifests; this only drives the CLI and checks what a user sees.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { CliResult } from './api-harness.js';

export interface AppsetCliChapter {
  /** Runs `capstan <args>` as the tenant (e.g. `(a) => capstan(config, ['--context', 'alice', ...a])`). */
  cli: (args: string[]) => Promise<CliResult>;
  /** A directory for the manifests. */
  dir: string;
  /** A set the tenant may create: its manifest, `namespace/name`, and the Applications it generates. */
  allowed: { manifest: string; qualifiedName: string; applications: string[] };
  /** The same set edited to generate Applications the tenant may not create: which ones are refused. */
  refused: { manifest: string; refusedApplications: string[] };
}

interface GenerateJson {
  applications: { metadata: { name: string } }[];
  verdicts: { name: string; allowed: boolean; reason: string }[];
}

const ok = (r: CliResult) => expect(r, `${r.stderr}${r.stdout}`).toMatchObject({ code: 0 });

async function preview(ch: AppsetCliChapter, file: string): Promise<void> {
  const gen = await ch.cli(['appset', 'generate', file, '-o', 'json']);
  ok(gen);
  const out = JSON.parse(gen.stdout) as GenerateJson;
  expect(out.applications.map((a) => a.metadata.name).sort()).toEqual([...ch.allowed.applications].sort());
  expect(out.verdicts.every((v) => v.allowed)).toBe(true);

  const dry = await ch.cli(['appset', 'create', file, '--dry-run', '-o', 'json']);
  ok(dry);
  expect(dry.stderr).toMatch(/ created \(dry-run\)\n$/);
  // A dry run writes nothing.
  const absent = await ch.cli(['appset', 'get', ch.allowed.qualifiedName]);
  expect(absent.code).not.toBe(0);
  expect(absent.stderr).toMatch(/NOT_FOUND/);
}

async function applyAndRead(ch: AppsetCliChapter, file: string): Promise<unknown> {
  const first = await ch.cli(['appset', 'apply', file]);
  ok(first);
  expect(first.stdout).toMatch(/^applicationset\/\S+ created\n$/);
  const again = await ch.cli(['appset', 'apply', file]);
  ok(again);
  expect(again.stdout).toMatch(/^applicationset\/\S+ unchanged\n$/);

  const get = await ch.cli(['appset', 'get', ch.allowed.qualifiedName, '-o', 'json']);
  ok(get);
  const set = JSON.parse(get.stdout) as { kind: string; spec: unknown };
  expect(set.kind).toBe('ApplicationSet');
  const summary = await ch.cli(['appset', 'get', ch.allowed.qualifiedName]);
  ok(summary);
  expect(summary.stdout).toContain(`Name:       ${ch.allowed.qualifiedName}\n`);

  const list = await ch.cli(['appset', 'list', '-o', 'name']);
  ok(list);
  expect(list.stdout.split('\n')).toContain(ch.allowed.qualifiedName);
  return set.spec;
}

async function refusedEdit(ch: AppsetCliChapter, file: string, specBefore: unknown): Promise<void> {
  const gen = await ch.cli(['appset', 'generate', file, '-o', 'json']);
  expect(gen.code, gen.stderr).toBe(1);
  expect(gen.stderr).toMatch(/Applications would be refused\n$/);
  const refusedNames = (JSON.parse(gen.stdout) as GenerateJson).verdicts
    .filter((v) => !v.allowed)
    .map((v) => v.name);
  expect(refusedNames.sort()).toEqual([...ch.refused.refusedApplications].sort());

  const apply = await ch.cli(['appset', 'apply', file]);
  expect(apply.code).not.toBe(0);
  expect(apply.stderr).toContain(`${file} (document 1): ApplicationSet `);
  for (const name of ch.refused.refusedApplications) expect(apply.stderr).toContain(name);
  // All or nothing: the stored set is the one before the refused edit.
  const get = await ch.cli(['appset', 'get', ch.allowed.qualifiedName, '-o', 'json']);
  ok(get);
  expect((JSON.parse(get.stdout) as { spec: unknown }).spec).toEqual(specBefore);
}

async function remove(ch: AppsetCliChapter): Promise<void> {
  const unconfirmed = await ch.cli(['appset', 'delete', ch.allowed.qualifiedName]);
  expect(unconfirmed.code).toBe(2);
  expect(unconfirmed.stderr).toMatch(/without confirmation: stdin is not a terminal \(pass --yes\)/);

  const del = await ch.cli(['appset', 'delete', ch.allowed.qualifiedName, '--yes']);
  ok(del);
  expect(del.stdout).toContain(`applicationset '${ch.allowed.qualifiedName}' deleted\n`);
  for (const name of ch.allowed.applications) expect(del.stdout).toContain(name);
  const gone = await ch.cli(['appset', 'get', ch.allowed.qualifiedName]);
  expect(gone.stderr).toMatch(/NOT_FOUND/);
}

/** Runs the chapter; each step asserts what the user sees, and the set is gone at the end. */
export async function appsetCliChapter(ch: AppsetCliChapter): Promise<void> {
  const allowedFile = path.join(ch.dir, 'appset-allowed.yaml');
  const refusedFile = path.join(ch.dir, 'appset-refused.yaml');
  await writeFile(allowedFile, ch.allowed.manifest);
  await writeFile(refusedFile, ch.refused.manifest);
  await preview(ch, allowedFile);
  const spec = await applyAndRead(ch, allowedFile);
  await refusedEdit(ch, refusedFile, spec);
  await remove(ch);
}
