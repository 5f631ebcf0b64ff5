// Writes an image's software bill of materials (CycloneDX 1.5 JSON) on stdout: every Debian
// package its files come from (the status file deploy/image/rootfs.mjs writes), every npm package
// bundled into the services (app/dist/services/packages.json, from deploy/image/bundle.mjs; the
// workspaces' own packages included), Node.js, and kustomize and helm where present.
//   node sbom.mjs ROOT...   # the image's file system: its layers' trees, the uppermost first
// Run by deploy/Dockerfile while it assembles the image; the image keeps it at
// /usr/share/capstan/sbom.cdx.json (the image has no cat: `docker run --rm --entrypoint node IMAGE -e
// 'process.stdout.write(require("node:fs").readFileSync("/usr/share/capstan/sbom.cdx.json"))'`).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const roots = process.argv.slice(2);
if (roots.length === 0) {
  process.stderr.write('usage: node sbom.mjs ROOT...\n');
  process.exit(64);
}
/** A file of the image: from the uppermost tree that has it. */
const fileOf = (p) => roots.map((r) => path.join(r, p)).find((f) => existsSync(f));

const components = [];

function debianPackages() {
  const status = readFileSync(fileOf('var/lib/dpkg/status'), 'utf8');
  for (const block of status.split('\n\n')) {
    const field = (name) => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1];
    if (!/^Status: .* installed$/m.test(block)) continue;
    const name = field('Package');
    const version = field('Version');
    const arch = field('Architecture');
    components.push({
      type: 'library',
      name,
      version,
      purl: `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12`,
    });
  }
}

function npmPackages() {
  const manifest = fileOf('app/dist/services/packages.json');
  if (!manifest) throw new Error('app/dist/services/packages.json missing: run deploy/image/bundle.mjs');
  for (const pkg of JSON.parse(readFileSync(manifest, 'utf8'))) {
    components.push({
      type: 'library',
      name: pkg.name,
      version: pkg.version,
      purl: `pkg:npm/${pkg.name.replace('@', '%40')}@${pkg.version}`,
      ...(typeof pkg.license === 'string'
        ? {
            licenses: [
              /[ ()]/.test(pkg.license) ? { expression: pkg.license } : { license: { id: pkg.license } },
            ],
          }
        : {}),
    });
  }
}

const toolVersion = (bin, args) => {
  try {
    return execFileSync(bin, args, { encoding: 'utf8' }).match(/v\d+(?:\.\d+)+/)?.[0];
  } catch {
    return undefined;
  }
};

debianPackages();
npmPackages();
components.push({
  type: 'application',
  name: 'node',
  version: process.version,
  purl: `pkg:generic/node@${process.version}`,
});
for (const [name, args, purl] of [
  ['kustomize', ['version'], 'pkg:golang/sigs.k8s.io/kustomize/kustomize/v5'],
  ['helm', ['version', '--short'], 'pkg:golang/helm.sh/helm/v3'],
]) {
  const bin = fileOf(`usr/local/bin/${name}`);
  const version = bin && toolVersion(bin, args);
  if (version) components.push({ type: 'application', name, version, purl: `${purl}@${version}` });
}

process.stdout.write(
  JSON.stringify(
    {
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      serialNumber: `urn:uuid:${randomUUID()}`,
      version: 1,
      metadata: {
        component: { type: 'container', name: 'capstan', version: process.env.CAPSTAN_VERSION ?? 'dev' },
        tools: { components: [{ type: 'application', name: 'capstan deploy/sbom.mjs' }] },
      },
      components,
    },
    null,
    2,
  ) + '\n',
);
