import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backendChoice, chooseBackend, goToolchainAvailable, type BackendFacts } from './backend.js';

/** Facts for chooseBackend; dockerAvailable counts how often it was asked. */
function facts(binariesPresent: boolean, goAvailable: boolean, docker: boolean) {
  const asked = { docker: 0 };
  const f: BackendFacts = {
    binariesPresent,
    goAvailable,
    dockerAvailable: () => {
      asked.docker++;
      return Promise.resolve(docker);
    },
  };
  return { f, asked };
}

describe('chooseBackend (auto)', () => {
  it('runs the real binaries when they are cached, without asking Docker', async () => {
    const { f, asked } = facts(true, false, true);
    expect(await chooseBackend('auto', f)).toBe('binaries');
    expect(asked.docker).toBe(0);
  });

  it('runs the real binaries when Go can build them, even with Docker there', async () => {
    const { f, asked } = facts(false, true, true);
    expect(await chooseBackend('auto', f)).toBe('binaries');
    expect(asked.docker).toBe(0);
  });

  it('falls back to k3s without binaries or Go when Docker answers', async () => {
    const { f, asked } = facts(false, false, true);
    expect(await chooseBackend('auto', f)).toBe('k3s');
    expect(asked.docker).toBe(1);
  });

  it('has nothing to run without binaries, Go or Docker', async () => {
    expect(await chooseBackend('auto', facts(false, false, false).f)).toBe('none');
  });

  it('runs what was asked for when not auto', async () => {
    expect(await chooseBackend('k3s', facts(true, true, false).f)).toBe('k3s');
    expect(await chooseBackend('binaries', facts(false, false, true).f)).toBe('binaries');
  });
});

describe('backendChoice', () => {
  it('takes the option over CAPSTAN_KUBE_BACKEND, and auto by default', () => {
    expect(backendChoice('k3s', { CAPSTAN_KUBE_BACKEND: 'binaries' })).toBe('k3s');
    expect(backendChoice(undefined, { CAPSTAN_KUBE_BACKEND: 'k3s' })).toBe('k3s');
    expect(backendChoice(undefined, {})).toBe('auto');
  });

  it('refuses an unknown backend, naming where it came from', () => {
    expect(() => backendChoice(undefined, { CAPSTAN_KUBE_BACKEND: 'kind' })).toThrow(
      'CAPSTAN_KUBE_BACKEND: expected "auto", "binaries" or "k3s", got "kind"',
    );
  });
});

describe('goToolchainAvailable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-go-probe-'));
  const fakeGo = join(dir, 'go');
  writeFileSync(fakeGo, '#!/bin/sh\n');
  chmodSync(fakeGo, 0o755);
  const empty = mkdtempSync(join(tmpdir(), 'capstan-go-probe-empty-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it('finds go on PATH, or the command GO names', () => {
    expect(goToolchainAvailable({ PATH: `${empty}:${dir}` })).toBe(true);
    expect(goToolchainAvailable({ PATH: empty, GO: fakeGo })).toBe(true);
  });

  it('does not take GO naming a missing file for a toolchain', () => {
    expect(goToolchainAvailable({ PATH: dir, GO: join(empty, 'go') })).toBe(false);
  });
});
