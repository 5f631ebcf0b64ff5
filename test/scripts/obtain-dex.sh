#!/usr/bin/env bash
# Obtains Dex (https://dexidp.io), the OpenID Connect provider the api's single sign-on tests log in
# through (a static password connector and a static client; see services/api/src/sso/).
#
# Built from its own Go module (github.com/dexidp/dex/cmd/dex at the commit of the release pinned
# below) with the machine's Go toolchain through the Go module proxy; checksums are verified against
# the Go checksum database as usual. Dex's root go.mod replaces github.com/dexidp/dex/api/v2 with its
# in-tree ./api/v2, which a module download does not contain, so `go install ...@version` refuses: the
# module is downloaded with `go mod download -json`, copied to a scratch directory, its replace
# pointed at the downloaded api/v2 module of the version it requires (the same source), and built
# there. Cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/dex/<version>/dex (obtain-kube-binaries.sh's
# convention): only the first run on a machine pays the build (about 2-5 minutes on 2 cores).
#
# Usage: test/scripts/obtain-dex.sh [--check] [--force] [--print-path]
#   --check       exit 0 if the binary is cached, 1 if not; never build
#   --force       rebuild even if cached
#   --print-path  print only the binary's path on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), GO (go command; default: go on PATH, else
# /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-dex
gt_parse_args --print-path "$@"
# Dex v2.45.1. Its module path has no /v2 suffix, so the proxy knows its releases by pseudo-version
# (tag v2.45.1 is commit 11d2eeb52b42).
release=v2.45.1
module_version=v0.0.0-20260303133905-11d2eeb52b42
GT_KEY="$release"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/dex"
GT_BINDIR="$GT_DIR/$release"
GT_BINARIES=(dex)
GT_STAMP="$module_version"

# json_field FILE FIELD: a top-level string field of `go mod download -json` output.
json_field() { sed -n "s/^[[:space:]]*\"$2\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" "$1" | head -n 1; }

gt_build() {
  local work="$1" dl="$1/download.json" api_dl="$1/api-download.json" src api_version api_dir
  gt_say "downloading github.com/dexidp/dex@$module_version ($release)"
  (cd "$work" && GOFLAGS=-mod=mod "$go_cmd" mod download -json "github.com/dexidp/dex@$module_version") >"$dl" || {
    gt_say "go mod download failed:"; cat "$dl" >&2; exit 1; }
  src="$(json_field "$dl" Dir)"
  [[ -d "$src" ]] || { gt_say "download gave no module directory"; cat "$dl" >&2; exit 1; }
  cp -R "$src" "$work/src"
  chmod -R u+w "$work/src"
  api_version="$(awk '$1 == "github.com/dexidp/dex/api/v2" && $2 ~ /^v/ { print $2; exit }' "$work/src/go.mod")"
  (cd "$work" && "$go_cmd" mod download -json "github.com/dexidp/dex/api/v2@$api_version") >"$api_dl" || {
    gt_say "go mod download of api/v2 failed:"; cat "$api_dl" >&2; exit 1; }
  api_dir="$(json_field "$api_dl" Dir)"
  (cd "$work/src" && "$go_cmd" mod edit -replace "github.com/dexidp/dex/api/v2=$api_dir")
  gt_say "[dex] compiling ./cmd/dex (api/v2 $api_version from the module proxy)"
  gt_go_progress dex "$work/build.log" "$work/src" \
    build -v -trimpath -mod=mod -ldflags="-s -w -X github.com/dexidp/dex/version.Version=$release" -o "$work/dex" ./cmd/dex
  "$work/dex" version >&2
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR/dex"; else gt_say "ready: $GT_BINDIR/dex ($release)"; fi
}
gt_obtain
