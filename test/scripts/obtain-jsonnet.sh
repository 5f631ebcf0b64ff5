#!/usr/bin/env bash
# Obtains capstan-jsonnet, the program the repo service evaluates Argo CD directory applications'
# *.jsonnet files with (optional) in tests, benchmarks and local runs.
#
# capstan-jsonnet (services/repo/jsonnet/main.go) is go-jsonnet — the Go implementation Argo CD
# itself links, github.com/google/go-jsonnet at the version pinned in its go.mod/go.sum — with an
# importer confined to the repository (an import of /etc/passwd or ../../outside fails) and the
# variables read from a file instead of argv. Built with the machine's Go toolchain through the Go
# module proxy; the module checksums are verified against go.sum and the Go checksum database.
# The binary is cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/jsonnet/<version>/capstan-jsonnet
# with a stamp of its sources, the same convention as obtain-helm.sh, so only the first run on a
# machine (or after a change of the sources) pays the build (well under a minute).
#
# Usage: test/scripts/obtain-jsonnet.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), GO (go command; default: go on PATH, else
# /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-jsonnet
gt_parse_args --print-path "$@"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../services/repo/jsonnet" && pwd)"
version="$(awk '$1 == "require" && $2 == "github.com/google/go-jsonnet" { print $3 }' "$src/go.mod")"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/jsonnet"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(capstan-jsonnet)
GT_STAMP="$(cat "$src/main.go" "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-16)"

gt_build() {
  local work="$1"
  gt_say "building capstan-jsonnet (go-jsonnet $version) with $("$go_cmd" version)"
  gt_go_progress capstan-jsonnet "$work/build.log" "$src" build -mod=readonly -trimpath -ldflags='-s -w' -o "$work/capstan-jsonnet" .
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/capstan-jsonnet"; else gt_say "ready: $GT_BINDIR/capstan-jsonnet (go-jsonnet $version)"; fi
}
gt_obtain
