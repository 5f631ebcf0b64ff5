// Writes the image's software bill of materials (CycloneDX 1.5 JSON) on stdout: every Debian
// package installed (dpkg's status file), every npm package under /app/node_modules (name,
// version, license, from its package.json; the workspaces' own packages included), Node.js, and
// kustomize and helm. Run by deploy/Dockerfile as the image's last build step; the image keeps it
// at /usr/share/capstan/sbom.cdx.json (`docker run --rm --entrypoint cat IMAGE /usr/share/capstan/sbom.cdx.json`).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

const components = [];
const seen = new Set();

function debianPackages() {
  const status = readFileSync('/var/lib/dpkg/status', 'utf8');
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

function npmPackages(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (entry.startsWith('@')) {
      npmPackages(full);
      continue;
    }
    // Workspace links to what the image leaves out (cli, test, bench) dangle: nothing is there.
    let real;
    try {
      real = realpathSync(full);
    } catch {
      continue;
    }
    const manifest = path.join(real, 'package.json');
    if (seen.has(real) || !existsSync(manifest)) continue;
    seen.add(real);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    const license = typeof pkg.license === 'string' ? [{ license: { id: pkg.license } }] : undefined;
    components.push({
      type: 'library',
      name: pkg.name,
      version: pkg.version,
      purl: `pkg:npm/${pkg.name.replace('@', '%40')}@${pkg.version}`,
      ...(license ? { licenses: license } : {}),
    });
    npmPackages(path.join(real, 'node_modules'));
  }
}

const toolVersion = (bin, args) => {
  try {
    return execFileSync(bin, args, { encoding: 'utf8' }).match(/v\d+\.\d+\.\d+/)?.[0];
  } catch {
    return undefined;
  }
};

debianPackages();
npmPackages('/app/node_modules');
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
  const version = toolVersion(`/usr/local/bin/${name}`, args);
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
