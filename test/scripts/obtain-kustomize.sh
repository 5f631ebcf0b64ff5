#!/usr/bin/env bash
# Obtains the kustomize binary the repo service renders kustomize applications with in
# tests, benchmarks and local runs.
#
# Built from its own Go module (sigs.k8s.io/kustomize/kustomize/v5, version pinned below)
# with the machine's Go toolchain through the Go module proxy; the module checksums are
# verified against the Go checksum database as usual. The binary is cached in
# ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/kustomize/<version>/kustomize, the same convention
# as obtain-kube-binaries.sh, so only the first run on a machine pays the build (about
# 1-3 minutes on 2 cores); later runs return at once.
#
# Usage: test/scripts/obtain-kustomize.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), KUSTOMIZE_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-kustomize
gt_parse_args --print-path "$@"
version="${KUSTOMIZE_VERSION:-v5.8.2}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/kustomize"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(kustomize)

gt_build() { gt_go_install "$1" kustomize sigs.k8s.io/kustomize/kustomize/v5 "$version"; }
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/kustomize"; else gt_say "ready: $GT_BINDIR/kustomize ($version)"; fi
}
gt_obtain
