# shellcheck shell=bash
# Sourced by deploy/ci/compose-test.sh: the local images, each tagged localhost/capstan-ci/<name>:<hash>
# where the hash covers everything it is built from, so an existing tag is reused as it is and a
# change rebuilds (older tags of the same name are then removed). Build times go to $ci_timings.
ci_timings=${ci_timings:-$(mktemp)}
ci_log_dir=${ci_log_dir:-$(mktemp -d)}

ci_hash() { sha256sum | cut -c1-16; }
# Content of files and directories, independent of timestamps and owners.
ci_content() {
  local p
  for p in "$@"; do
    if [[ -d $p ]]; then tar -C "$p" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c . ; else cat "$p"; fi
  done
}
ci_exists() { podman image exists "$1"; }
# ci_record NAME SECONDS: one build's time, for bench/results/image.json.
ci_record() { printf '{"image":"%s","seconds":%s}\n' "$1" "$2" >>"$ci_timings"; }
# Removes the other tags of an image name once a new one is built.
ci_prune() {
  local name=$1 keep=$2 ref
  for ref in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$name"); do
    [[ $ref == "$keep" ]] || podman rmi "$ref" >/dev/null 2>&1 || true
  done
}

# A Debian 12 root filesystem from debootstrap (minbase), trimmed as the slim images are, imported.
ci_debian_image() {
  local tag rootfs start=$SECONDS
  tag="localhost/capstan-ci/debian:bookworm-$(declare -f ci_debian_image | ci_hash)"
  if ci_exists "$tag"; then echo "$tag"; return; fi
  echo "compose:test: building $tag (debootstrap --variant=minbase bookworm)" >&2
  rootfs=$(mktemp -d /var/tmp/capstan-rootfs.XXXXXX)
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$ci_log_dir/debootstrap.log" 2>&1 \
    || { tail -20 "$ci_log_dir/debootstrap.log" >&2; rm -rf "$rootfs"; return 1; }
  # As the -slim images: no documentation, manual pages or translations from later installs either.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90slim"
  # As the official debian images' docker-clean: no package files or apt caches left in a layer.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
  find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright -type f -delete
  rm -rf "$rootfs"/usr/share/{man,info,locale}/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" --numeric-owner -c . \
    | podman import --change 'CMD ["/bin/bash"]' - "$tag" >>"$ci_log_dir/debootstrap.log" 2>&1
  rm -rf "$rootfs"
  ci_record debian $((SECONDS - start))
  ci_prune localhost/capstan-ci/debian "$tag"
  echo "$tag"
}

# ci_image NAME BASE [FILE=SOURCE]...: deploy/ci/images/NAME/Containerfile, with BASE as build
# argument and each SOURCE (file or directory) copied into the build context as FILE.
ci_image() {
  local name=$1 base=$2 dir="deploy/ci/images/$1" tag ctx pair start=$SECONDS
  shift 2
  tag="localhost/capstan-ci/$name:$({ echo "$base"; ci_content "$dir"; for pair in "$@"; do echo "${pair%%=*}"; ci_content "${pair#*=}"; done; } | ci_hash)"
  if ci_exists "$tag"; then echo "$tag"; return; fi
  echo "compose:test: building $tag" >&2
  ctx=$(mktemp -d /var/tmp/capstan-ctx.XXXXXX)
  cp -r "$dir/." "$ctx/"
  for pair in "$@"; do cp -r "${pair#*=}" "$ctx/${pair%%=*}"; done
  if ! podman build --format docker --build-arg "BASE=$base" -t "$tag" "$ctx" >"$ci_log_dir/$name.log" 2>&1; then
    tail -30 "$ci_log_dir/$name.log" >&2; rm -rf "$ctx"; return 1
  fi
  rm -rf "$ctx"
  ci_record "$name" $((SECONDS - start))
  ci_prune "localhost/capstan-ci/$name" "$tag"
  echo "$tag"
}

# The Capstan image from deploy/Dockerfile (target capstan), with the local Node.js image and the
# prebuilt tools. The hash covers every file git would see (tracked or not ignored) except what
# deploy/Dockerfile.dockerignore keeps out of the build context as documentation or deployment
# files (the same list, below), and the bases.
ci_capstan_image() {
  local node=$1 tools=$2 tag start=$SECONDS
  tag="localhost/capstan-ci/capstan:$( { echo "$node $tools"; git ls-files -z -co --exclude-standard \
    | grep -zv -E '(^docs/|\.md$|^bench/results/|^deploy/(ci|k8s|k8s-ha|helm|k3s)/|^\.ci/)' \
    | (xargs -0 -r sha256sum 2>/dev/null || true); } | ci_hash)"
  if ci_exists "$tag" && ci_exists "${tag/capstan:/capstan-api:}"; then echo "$tag"; return; fi
  echo "compose:test: building $tag from deploy/Dockerfile (log: $ci_log_dir/capstan.log)" >&2
  if ! podman build --format docker -f deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    --build-arg "NODE_IMAGE=$node" --build-arg "TOOLS_FROM=$tools" --target capstan -t "$tag" . \
    >"$ci_log_dir/capstan.log" 2>&1; then
    tail -40 "$ci_log_dir/capstan.log" >&2; return 1
  fi
  ci_record capstan $((SECONDS - start))
  # The slim per-service runtime (target api; sync and appset are the same but for SERVICE): its size
  # is reported, and the compose test runs the api from it (deploy/ci/compose.ci.yml). Every stage it
  # needs is in the cache by now.
  podman build --format docker -f deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    --build-arg "NODE_IMAGE=$node" --build-arg "TOOLS_FROM=$tools" --target api -t "${tag/capstan:/capstan-api:}" . \
    >>"$ci_log_dir/capstan.log" 2>&1 || { tail -40 "$ci_log_dir/capstan.log" >&2; return 1; }
  ci_prune localhost/capstan-ci/capstan-api "${tag/capstan:/capstan-api:}"
  ci_prune localhost/capstan-ci/capstan "$tag"
  echo "$tag"
}

# ci_report IMAGE UP_SECONDS STORY_SECONDS: the image's size and SBOM, the build times of this run and
# the stack's timings, printed and written to bench/results/image.json (the benchmarks' format). Fails
# (status 1, after writing the file) when a figure misses its goal: the image size goal (< 250 MiB) is
# enforced, not only reported.
ci_report() {
  local image=$1 sbom rc=0
  sbom=$(mktemp)
  # No cat in the image: node prints it.
  podman run --rm --entrypoint node "$image" -e \
    'process.stdout.write(require("node:fs").readFileSync("/usr/share/capstan/sbom.cdx.json"))' >"$sbom" 2>/dev/null
  CI_IMAGE="$image" CI_SIZE=$(podman image inspect --format '{{.Size}}' "$image") CI_SBOM="$sbom" \
    CI_API_SIZE=$(podman image inspect --format '{{.Size}}' "${image/capstan:/capstan-api:}") \
    CI_TIMINGS="$ci_timings" CI_UP="$2" CI_STORY="$3" node --input-type=module -e '
      import { readFileSync, writeFileSync } from "node:fs";
      import os from "node:os";
      const env = process.env;
      const sbom = JSON.parse(readFileSync(env.CI_SBOM, "utf8"));
      const kind = (p) => sbom.components.filter((c) => c.purl?.startsWith(p)).length;
      const mib = Number(env.CI_SIZE) / 2 ** 20;
      const builds = readFileSync(env.CI_TIMINGS, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const apiMib = Number(env.CI_API_SIZE) / 2 ** 20;
      const figures = [
        { name: "image size, generic (target capstan, uncompressed, podman image inspect)", value: Math.round(mib), unit: "MiB", goal: "< 250", met: mib < 250 },
        { name: "image size, api/sync/appset (targets on the slim runtime)", value: Math.round(apiMib), unit: "MiB", goal: "< 250", met: apiMib < 250 },
        { name: "SBOM: Debian packages", value: kind("pkg:deb/"), unit: "packages" },
        { name: "SBOM: npm packages", value: kind("pkg:npm/"), unit: "packages" },
        ...builds.map((b) => ({ name: `build ${b.image} image (this run)`, value: b.seconds, unit: "s" })),
        { name: "compose up --wait, every service healthy", value: Number(env.CI_UP), unit: "s" },
        { name: "guestbook story through the published ports", value: Number(env.CI_STORY), unit: "s" },
      ];
      const result = {
        name: "image",
        measuredAt: new Date().toISOString(),
        machine: { hostname: os.hostname(), cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, kernel: os.release() },
        image: env.CI_IMAGE,
        figures,
      };
      for (const f of figures) console.error(`  ${f.name}: ${f.value} ${f.unit}${f.goal ? ` (goal ${f.goal}: ${f.met ? "met" : "NOT met"})` : ""}`);
      writeFileSync("bench/results/image.json", JSON.stringify(result, null, 2) + "\n");
      const missed = figures.filter((f) => f.goal && !f.met);
      for (const f of missed) console.error(`compose:test: ${f.name} is ${f.value} ${f.unit}, goal ${f.goal}`);
      process.exit(missed.length > 0 ? 1 : 0);
    ' || rc=$?
  rm -f "$sbom"
  return "$rc"
}
