#!/usr/bin/env bash
# Obtains the real kube-apiserver and etcd that Capstan's tests run on loopback.
#
# Both are built from their own Go modules with the machine's Go toolchain, at the
# versions pinned in test/tools/kube/go.mod (kube-apiserver from k8s.io/kubernetes,
# etcd from go.etcd.io/etcd/server/v3 at the version Kubernetes itself pins).
# Binaries are cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/kube/<kubernetes version>/,
# so only the first run on a machine pays the build (4-6 minutes on 2 cores with an empty
# Go build cache);
# later runs return at once.
#
# Usage: test/scripts/obtain-kube-binaries.sh [--check] [--force] [--print-dir]
#   --check      exit 0 if the binaries are cached and current, 1 if not; never build
#   --force      rebuild even if cached
#   --print-dir  print only the binary directory on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), GO (go command; default: go on PATH, else
# /usr/local/go/bin/go), GOFLAGS/GOPROXY/GOCACHE as usual for Go.
set -euo pipefail

check_only=0 force=0 print_dir=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --force) force=1 ;;
    --print-dir) print_dir=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "obtain-kube-binaries: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

say() { echo "obtain-kube-binaries: $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
moddir="$(cd "$here/../tools/kube" && pwd)"

# pinned MODULE: the version go.mod requires (either `require M v` or inside a block).
pinned() {
  awk -v m="$1" '$0 !~ /=>/ { for (i = 1; i < NF; i++) if ($i == m && $(i + 1) ~ /^v/) { print $(i + 1); exit } }' "$moddir/go.mod"
}
kube_version="$(pinned k8s.io/kubernetes)"
etcd_version="$(pinned go.etcd.io/etcd/server/v3)"
if [[ -z "$kube_version" || -z "$etcd_version" ]]; then
  say "cannot read the pinned versions from $moddir/go.mod"
  exit 1
fi

cache_root="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
bindir="$cache_root/kube/$kube_version"

# What `kube-apiserver --version` and the /version endpoint report, as Kubernetes' own release
# build sets it (hack/lib/version.sh); without it they say v0.0.0-master.
kube_minor="${kube_version#v1.}"; kube_minor="${kube_minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# The stamp identifies exactly what was built: a changed go.mod/go.sum, entry point or build
# flags (e.g. a patched pin within the same release) rebuilds.
stamp_of_sources() {
  { cat "$moddir/go.mod" "$moddir/go.sum" "$moddir/etcd/main.go"; echo "$ldflags"; } | sha256sum | awk '{ print $1 }'
}
want_stamp="$(stamp_of_sources)"

is_current() {
  [[ -x "$bindir/kube-apiserver" && -x "$bindir/etcd" && -f "$bindir/STAMP" ]] &&
    [[ "$(cat "$bindir/STAMP")" == "$want_stamp" ]]
}

finish() {
  if [[ $print_dir == 1 ]]; then echo "$bindir"; else say "ready in $bindir (kube-apiserver $kube_version, etcd $etcd_version)"; fi
}

if [[ $force == 0 ]] && is_current; then
  [[ $check_only == 1 ]] && exit 0
  finish
  exit 0
fi
if [[ $check_only == 1 ]]; then
  say "not cached (or out of date) in $bindir; run: bash test/scripts/obtain-kube-binaries.sh"
  exit 1
fi

go_cmd="${GO:-}"
if [[ -z "$go_cmd" ]]; then
  if command -v go >/dev/null 2>&1; then go_cmd=go
  elif [[ -x /usr/local/go/bin/go ]]; then go_cmd=/usr/local/go/bin/go
  else
    say "no Go toolchain found (need Go >= $(awk '$1 == "go" { print $2 }' "$moddir/go.mod")): install Go or set GO=/path/to/go"
    exit 1
  fi
fi

mkdir -p "$cache_root/kube"
# One build at a time per machine: parallel test runs wait for the first one's build.
lockfile="$cache_root/kube/.lock-$kube_version"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$lockfile"
  if ! flock -n 9; then
    say "another build of $kube_version is running; waiting for it"
    flock 9
  fi
  if [[ $force == 0 ]] && is_current; then finish; exit 0; fi
fi

say "building kube-apiserver $kube_version and etcd $etcd_version with $("$go_cmd" version)"
say "first build on this machine: expect about 4-10 minutes on 2 cores; cached afterwards in $bindir"

work="$(mktemp -d "$cache_root/kube/.build-$kube_version.XXXXXX")"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# build LABEL OUTPUT PACKAGE: runs go build with -v into a log and prints progress
# (packages compiled so far) every 30 s, so a long first build is never silent.
build() {
  local label="$1" out="$2" pkg="$3" log="$work/$1.log" start=$SECONDS rc
  say "[$label] downloading modules and compiling $pkg"
  (cd "$moddir" && "$go_cmd" build -v -trimpath -ldflags="$ldflags" -o "$out" "$pkg") >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 30); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "[$label] still compiling: $(grep -c -v '^go: ' "$log" || true) packages so far, $((SECONDS - start))s elapsed"
    fi
  done
  if wait "$pid"; then rc=0; else rc=$?; fi
  if [[ $rc != 0 ]]; then
    say "[$label] build FAILED (exit $rc) after $((SECONDS - start))s; last lines of the log:"
    tail -n 40 "$log" >&2
    exit "$rc"
  fi
  say "[$label] built in $((SECONDS - start))s ($(du -h "$out" | awk '{ print $1 }'))"
}

total_start=$SECONDS
(cd "$moddir" && "$go_cmd" mod download) >"$work/download.log" 2>&1 || {
  say "go mod download failed:"; cat "$work/download.log" >&2; exit 1; }
build etcd "$work/etcd" ./etcd
build kube-apiserver "$work/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver

say "built: $("$work/kube-apiserver" --version), etcd $("$work/etcd" --version | awk '/^etcd Version/ { print $3 }')"

# Publish atomically: the binary directory either holds a complete, stamped build or
# nothing from this run.
mkdir -p "$bindir"
mv -f "$work/etcd" "$bindir/etcd"
mv -f "$work/kube-apiserver" "$bindir/kube-apiserver"
printf '%s\n' "$want_stamp" >"$bindir/STAMP.tmp"
mv -f "$bindir/STAMP.tmp" "$bindir/STAMP"
printf 'kube-apiserver %s\netcd %s\n' "$kube_version" "$etcd_version" >"$bindir/VERSIONS"
say "total build time $((SECONDS - total_start))s"
finish
