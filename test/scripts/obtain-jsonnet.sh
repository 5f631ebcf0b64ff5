#!/usr/bin/env bash
# Obtains the jsonnet binary the repo service evaluates Argo CD directory applications' *.jsonnet
# files with (optional) in tests, benchmarks and local runs.
#
# Built from its own Go module (github.com/google/go-jsonnet/cmd/jsonnet, the Go implementation
# Argo CD itself links, version pinned below) with the machine's Go toolchain through the Go module
# proxy; the module checksums are verified against the Go checksum database as usual. The binary
# is cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/jsonnet/<version>/jsonnet, the same
# convention as obtain-helm.sh, so only the first run on a machine pays the build (well under a
# minute); later runs return at once.
#
# Usage: test/scripts/obtain-jsonnet.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), JSONNET_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-jsonnet
gt_parse_args --print-path "$@"
version="${JSONNET_VERSION:-v0.22.0}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/jsonnet"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(jsonnet)

gt_build() {
  local work="$1" package=github.com/google/go-jsonnet/cmd/jsonnet
  gt_say "building $package@$version with $("$go_cmd" version)"
  export GOBIN="$work"
  gt_go_progress jsonnet "$work/build.log" "$work" install -v -trimpath -ldflags='-s -w' "$package@$version"
  "$work/jsonnet" --version >&2
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/jsonnet"; else gt_say "ready: $GT_BINDIR/jsonnet ($version)"; fi
}
gt_obtain
