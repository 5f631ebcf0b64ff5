#!/usr/bin/env bash
# Obtains the Docker Compose CLI (the `docker compose` plugin, also usable as `docker-compose`) that
# `npm run compose:test` starts deploy/docker-compose.yml with: the implementation users run, built
# from its own Go module (github.com/docker/compose/v2, version pinned below) with the machine's Go
# toolchain, and cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/compose/<version>/docker-compose,
# the same convention as obtain-kube-binaries.sh. First build: about 3-6 minutes on 2 cores.
#
# Usage: test/scripts/obtain-compose.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), COMPOSE_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-compose
gt_parse_args --print-path "$@"
# v2 rather than v5: its Docker API client still speaks the API version podman 4 (Debian 12) serves.
version="${COMPOSE_VERSION:-v2.40.3}"
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/compose"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(docker-compose)

gt_build() {
  local work="$1" module=github.com/docker/compose/v2 dir
  gt_say "building $module@$version (./cmd) with $("$go_cmd" version)"
  # Its go.mod has exclude directives, which `go install module@version` refuses: build inside a copy
  # of the module, with its own go.mod and go.sum (checked against the checksum database on download).
  dir="$("$go_cmd" mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" ]] || { gt_say "go mod download $module@$version failed"; exit 1; }
  cp -r "$dir" "$work/src" && chmod -R u+w "$work/src"
  # The version the binary reports (`docker compose version`), as the project's Makefile sets it.
  gt_go_progress docker-compose "$work/build.log" "$work/src" build -v -trimpath -mod=readonly \
    -ldflags="-s -w -X $module/internal.Version=$version" -o "$work/docker-compose" ./cmd
  rm -rf "$work/src"
  "$work/docker-compose" version >&2
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/docker-compose"; else gt_say "ready: $GT_BINDIR/docker-compose ($version)"; fi
}
gt_obtain
