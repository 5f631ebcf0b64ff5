#!/usr/bin/env bash
# Obtains a current nats-server for the fault suite (test/faults/), which runs its own three-node
# JetStream cluster and kills its nodes; Debian's nats-server is 2.9, older than the clustering and
# JetStream behaviour the suite measures.
#
# Built from its own Go module (github.com/nats-io/nats-server/v2, version pinned below) with the
# machine's Go toolchain through the Go module proxy; the module checksums are verified against the
# Go checksum database as usual. The binary is cached in
# ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/nats-server/<version>/nats-server, the same convention as
# obtain-kube-binaries.sh, so only the first run on a machine pays the build (about 1-3 minutes on
# 2 cores); later runs return at once.
#
# Usage: test/scripts/obtain-nats-server.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), NATS_SERVER_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-nats-server
gt_parse_args --print-path "$@"
version="${NATS_SERVER_VERSION:-v2.15.2}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/nats-server"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(nats-server)

# As gt_go_install, but nats-server tells its version with --version (a bare `version` argument
# would start a server).
gt_build() {
  local work="$1"
  gt_say "building github.com/nats-io/nats-server/v2@$version with $("$go_cmd" version)"
  export GOBIN="$work"
  gt_go_progress nats-server "$work/build.log" "$work" install -v -trimpath -ldflags='-s -w' \
    "github.com/nats-io/nats-server/v2@$version"
  "$work/nats-server" --version >&2
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/nats-server"; else gt_say "ready: $GT_BINDIR/nats-server ($version)"; fi
}
gt_obtain
