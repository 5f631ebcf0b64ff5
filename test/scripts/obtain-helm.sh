#!/usr/bin/env bash
# Obtains the helm binary the repo service renders Helm charts with (optional) in
# tests, benchmarks and local runs.
#
# Built from its own Go module (helm.sh/helm/v3/cmd/helm, version pinned below)
# with the machine's Go toolchain through the Go module proxy; the module checksums are
# verified against the Go checksum database as usual. The binary is cached in
# ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/helm/<version>/helm, the same convention
# as obtain-kube-binaries.sh, so only the first run on a machine pays the build (about
# 1-3 minutes on 2 cores); later runs return at once.
#
# Usage: test/scripts/obtain-helm.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), HELM_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-helm
gt_parse_args --print-path "$@"
version="${HELM_VERSION:-v3.22.0}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/helm"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(helm)

gt_build() { gt_go_install "$1" helm helm.sh/helm/v3/cmd/helm "$version"; }
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/helm"; else gt_say "ready: $GT_BINDIR/helm ($version)"; fi
}
gt_obtain
