import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../errors.js';
import { readManifestObject } from './manifest-files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'capstan-cli-f-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('readManifestObject (-f of app create and proj create)', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the one object of a file', () => {
    expect(readManifestObject(file('p.yaml', 'metadata: {name: p}\nspec: {}\n'))).toEqual({
      metadata: { name: 'p' },
      spec: {},
    });
  });

  it('refuses an alias bomb with the shared reader’s message and exit status 2', () => {
    const bomb = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...'bcdefghi'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
    ].join('\n');
    const p = file('bomb.yaml', bomb);
    expect(() => readManifestObject(p)).toThrow(CliError);
    try {
      readManifestObject(p);
    } catch (err) {
      expect((err as CliError).exitCode).toBe(2);
      expect((err as CliError).message).toBe(
        `${p}: invalid YAML: aliases expand more than 100 times (refused as a possible alias bomb)`,
      );
    }
  });

  it('refuses several documents', () => {
    expect(() => readManifestObject(file('two.yaml', 'a: 1\n---\nb: 2\n'))).toThrow(
      /expected exactly one document/,
    );
  });
});
