#!/usr/bin/env node
// Bundles the four services for the image (deploy/Dockerfile): one esbuild run over their built
// entry points (services/<name>/dist/main.js) with code splitting, into dist/services/<name>.mjs and
// shared chunks, so the image ships the code the services run instead of the workspace's
// node_modules (the web UI's, the tests', the tools'). Usage, after the services are built:
//   node deploy/image/bundle.mjs            # writes dist/services/ below the repository root
// Then node dist/services/api.mjs runs the api, here as in the image (/app/dist/services/).
//
// What the bundle keeps as files, because code finds it on disk at run time:
// - import.meta.url of every workspace module is rewritten to where that module lives in the
//   repository (relative to the bundle, so it holds in /app and in a checkout): the ApplicationSet
//   template module (libs/appset/dist/gotemplate/appset.wasm, wasm_exec.js) and the engine digest
//   over libs/appset/dist, the web UI (ui/dist) and createRequire(...).resolve('jq-wasm') find their
//   files where they always were;
// - jq-wasm and wasmoon (their WebAssembly next to their JavaScript, loaded by path) stay packages,
//   resolved from node_modules/ (the image copies exactly these; EXTERNAL_PACKAGES);
// Also written: dist/services/packages.json (every npm package in the bundle, for the SBOM) and
// THIRD-PARTY-LICENSES.txt (their license files, which bundling would otherwise drop).
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SERVICES = ['api', 'repo', 'sync', 'appset'];
export const EXTERNAL_PACKAGES = ['jq-wasm', 'wasmoon'];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outdir = path.join(root, 'dist/services');

// import.meta.url → the module's own location, relative to the bundle's directory.
const keepModuleUrls = {
  name: 'keep-module-urls',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = path.relative(outdir, args.path).split(path.sep).join('/');
      return {
        contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
        loader: 'js',
      };
    });
  },
};

// CommonJS dependencies call require() for Node's modules and may read __dirname/__filename (lazily,
// e.g. gRPC's channelz); in an ES module those come from the bundle file.
const banner = [
  "import { createRequire as __capstanCreateRequire } from 'node:module';",
  "import { fileURLToPath as __capstanFileURLToPath } from 'node:url';",
  'const require = __capstanCreateRequire(import.meta.url);',
  'const __capstanFilename = __capstanFileURLToPath(import.meta.url);',
  "const __capstanDirname = __capstanFilename.slice(0, __capstanFilename.lastIndexOf('/'));",
].join('\n');

function packageDirOf(file) {
  const parts = file.split('/');
  const i = parts.lastIndexOf('node_modules');
  // The workspaces' own packages (libs/<name>, services/<name>) count too.
  if (i < 0) return /^(libs|services)$/.test(parts[0]) ? parts.slice(0, 2).join('/') : undefined;
  return parts.slice(0, i + (parts[i + 1]?.startsWith('@') ? 3 : 2)).join('/');
}

function bundledPackages(metafile) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDirOf(input);
    if (dir) dirs.add(dir);
  }
  for (const name of EXTERNAL_PACKAGES) dirs.add(`node_modules/${name}`);
  const packages = [];
  const seen = new Set();
  let licenses = '';
  for (const dir of [...dirs].sort()) {
    const pkg = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8'));
    // Nested copies of one version (npm could not hoist them) are one component.
    if (seen.has(`${pkg.name}@${pkg.version}`)) continue;
    seen.add(`${pkg.name}@${pkg.version}`);
    packages.push({ name: pkg.name, version: pkg.version, license: pkg.license });
    if (!dir.includes('node_modules')) continue; // Capstan's own: not third-party
    const files = readdirSync(path.join(root, dir)).filter((f) => /^(licen[cs]e|copying|notice)/i.test(f));
    for (const f of files)
      licenses += `=== ${pkg.name}@${pkg.version} (${f})\n\n${readFileSync(path.join(root, dir, f), 'utf8').trim()}\n\n`;
    if (files.length === 0)
      licenses += `=== ${pkg.name}@${pkg.version}: license ${pkg.license ?? 'not stated'}\n\n`;
  }
  return { packages, licenses };
}

export async function bundleServices() {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const entryPoints = Object.fromEntries(
    SERVICES.map((s) => [s, path.join(root, `services/${s}/dist/main.js`)]).filter(([, f]) => {
      if (!existsSync(f))
        throw new Error(
          `${f} is not built: npx turbo run build --filter=@capstan/${path.basename(path.dirname(path.dirname(f)))}...`,
        );
      return true;
    }),
  );
  // The image's self-check (selfcheck.mjs) shares the services' chunks: what it finds, they find.
  entryPoints.selfcheck = path.join(root, 'deploy/image/selfcheck.mjs');
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    external: EXTERNAL_PACKAGES,
    banner: { js: banner },
    define: { __dirname: '__capstanDirname', __filename: '__capstanFilename' },
    plugins: [keepModuleUrls],
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const { packages, licenses } = bundledPackages(result.metafile);
  writeFileSync(path.join(outdir, 'packages.json'), JSON.stringify(packages, null, 2) + '\n');
  writeFileSync(path.join(outdir, 'THIRD-PARTY-LICENSES.txt'), licenses);
  return { outdir, packages };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { packages } = await bundleServices();
  const size = readdirSync(outdir).reduce((n, f) => n + readFileSync(path.join(outdir, f)).length, 0);
  console.log(
    `dist/services: ${SERVICES.join(', ')}; ${packages.length} npm packages, ${(size / 2 ** 20).toFixed(1)} MiB`,
  );
}
