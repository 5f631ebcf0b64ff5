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

version="${HELM_VERSION:-v3.22.0}"
check_only=0 force=0 print_path=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --force) force=1 ;;
    --print-path) print_path=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "obtain-helm: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

say() { echo "obtain-helm: $*" >&2; }

cache_root="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
bindir="$cache_root/helm/$version"
bin="$bindir/helm"

finish() {
  if [[ $print_path == 1 ]]; then echo "$bin"; else say "ready: $bin ($version)"; fi
}

if [[ $force == 0 && -x "$bin" ]]; then
  [[ $check_only == 1 ]] && exit 0
  finish
  exit 0
fi
if [[ $check_only == 1 ]]; then
  say "not cached in $bindir; run: bash test/scripts/obtain-helm.sh"
  exit 1
fi

go_cmd="${GO:-}"
if [[ -z "$go_cmd" ]]; then
  if command -v go >/dev/null 2>&1; then go_cmd=go
  elif [[ -x /usr/local/go/bin/go ]]; then go_cmd=/usr/local/go/bin/go
  else say "no Go toolchain found: install Go or set GO=/path/to/go"; exit 1
  fi
fi

mkdir -p "$cache_root/helm"
# One build at a time per machine: parallel test runs wait for the first one's build.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/helm/.lock-$version"
  if ! flock -n 9; then say "another build of $version is running; waiting for it"; flock 9; fi
  if [[ $force == 0 && -x "$bin" ]]; then finish; exit 0; fi
fi

work="$(mktemp -d "$cache_root/helm/.build-$version.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "building helm.sh/helm/v3/cmd/helm@$version with $("$go_cmd" version)"
start=$SECONDS
# Outside any module, `go install pkg@version` builds exactly the pinned module graph.
(cd "$work" && CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOBIN="$work/bin" \
  "$go_cmd" install -trimpath -ldflags='-s -w' "helm.sh/helm/v3/cmd/helm@$version") \
  >"$work/build.log" 2>&1 || { say "build FAILED:"; tail -n 40 "$work/build.log" >&2; exit 1; }
"$work/bin/helm" version >&2

# Publish atomically: the directory holds a complete binary or nothing from this run.
mkdir -p "$bindir"
mv -f "$work/bin/helm" "$bin"
say "built in $((SECONDS - start))s"
finish
