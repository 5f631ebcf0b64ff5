#!/usr/bin/env node
// The npm registry this project's machines reach answers 404 for the other platforms' prebuilt
// binaries (rollup, turbo, unrs-resolver publish one optional package per os/cpu). `npm install` then
// leaves those optional packages out of package-lock.json, and `npm ci` refuses the lockfile as out of
// sync. This script adds the missing entries back with their os/cpu/libc, so `npm ci` accepts the
// lockfile and skips them on this platform, as it would with a complete registry.
// Run it after any `npm install` that changes package-lock.json: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const osOf = (n) =>
  n.includes('android')
    ? 'android'
    : n.includes('darwin')
      ? 'darwin'
      : n.includes('freebsd')
        ? 'freebsd'
        : n.includes('openbsd')
          ? 'openbsd'
          : n.includes('openharmony')
            ? 'openharmony'
            : n.includes('linux')
              ? 'linux'
              : /win32|windows/.test(n)
                ? 'win32'
                : undefined;
const cpuOf = (n) =>
  /arm64|aarch64/.test(n)
    ? 'arm64'
    : /-arm-|-arm$|armv7/.test(n)
      ? 'arm'
      : n.includes('ia32')
        ? 'ia32'
        : n.includes('loong64')
          ? 'loong64'
          : n.includes('ppc64')
            ? 'ppc64'
            : n.includes('riscv64')
              ? 'riscv64'
              : n.includes('s390x')
                ? 's390x'
                : n.includes('wasm32')
                  ? 'wasm32'
                  : /x64|-64$/.test(n)
                    ? 'x64'
                    : undefined;
const libcOf = (n) => (n.includes('musl') ? 'musl' : /-gnu/.test(n) ? 'glibc' : undefined);

let added = 0;
for (const [path, pkg] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    // Resolved next to the parent, or hoisted to the root node_modules.
    const base = path === '' ? '' : `${path}/`;
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`];
    if (candidates.some((c) => packages[c])) continue;
    if (!/^\d+\.\d+\.\d+/.test(version)) continue; // only exact pins, as platform binaries are
    const os = osOf(name);
    const cpu = cpuOf(name);
    if (!os && !cpu) continue;
    const libc = libcOf(name);
    packages[`node_modules/${name}`] = {
      version,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(pkg.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      ...(os ? { os: [os] } : {}),
    };
    added++;
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
process.stdout.write(`complete-lockfile: added ${added} platform entries\n`);
