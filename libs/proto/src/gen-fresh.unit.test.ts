// The generated code is committed so that consumers build without buf; this test fails when it no
// longer matches the .proto files (run `npm run gen -w @capstan/proto` and commit the result).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) visit(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  visit(dir);
  return out;
}

describe('generated code', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'capstan-proto-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('matches the .proto files', () => {
    execFileSync('node', [join(pkgDir, 'scripts', 'generate.mjs'), tmp], { stdio: 'pipe' });
    const fresh = files(join(tmp, 'src', 'gen'));
    const committed = files(join(pkgDir, 'src', 'gen'));
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), `${path} is stale`).toBe(text);
  });

  it('passes buf lint', () => {
    const bin = resolve(pkgDir, '..', '..', 'node_modules', '.bin', 'buf');
    expect(() => execFileSync(bin, ['lint'], { cwd: pkgDir, stdio: 'pipe' })).not.toThrow();
  });
});
