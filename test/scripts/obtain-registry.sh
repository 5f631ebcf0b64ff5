#!/usr/bin/env bash
# Obtains the CNCF Distribution registry (https://distribution.github.io/distribution/), the OCI
# registry the repo service's OCI Helm chart tests push charts to (`helm push`) and pull them from.
#
# Built from its own Go module (github.com/distribution/distribution/v3/cmd/registry, version
# pinned below) with the machine's Go toolchain through the Go module proxy; the module checksums
# are verified against the Go checksum database as usual. Cached in
# ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/registry/<version>/registry (obtain-kube-binaries.sh's
# convention): only the first run on a machine pays the build (a few minutes on 2 cores).
#
# Usage: test/scripts/obtain-registry.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), REGISTRY_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-registry
gt_parse_args --print-path "$@"
version="${REGISTRY_VERSION:-v3.0.0}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/registry"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(registry)

gt_build() {
  local work="$1"
  gt_say "building github.com/distribution/distribution/v3/cmd/registry@$version with $("$go_cmd" version)"
  export GOBIN="$work"
  gt_go_progress registry "$work/build.log" "$work" install -v -trimpath \
    -ldflags="-s -w -X github.com/distribution/distribution/v3/version.version=$version" \
    "github.com/distribution/distribution/v3/cmd/registry@$version"
  "$work/registry" --version >&2
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/registry"; else gt_say "ready: $GT_BINDIR/registry ($version)"; fi
}
gt_obtain
