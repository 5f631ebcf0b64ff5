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
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-kube-binaries
gt_parse_args --print-dir "$@"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
moddir="$(cd "$here/../tools/kube" && pwd)"

# pinned MODULE: the version go.mod requires (either `require M v` or inside a block).
pinned() {
  awk -v m="$1" '$0 !~ /=>/ { for (i = 1; i < NF; i++) if ($i == m && $(i + 1) ~ /^v/) { print $(i + 1); exit } }' "$moddir/go.mod"
}
kube_version="$(pinned k8s.io/kubernetes)"
etcd_version="$(pinned go.etcd.io/etcd/server/v3)"
if [[ -z "$kube_version" || -z "$etcd_version" ]]; then
  gt_say "cannot read the pinned versions from $moddir/go.mod"
  exit 1
fi

# What `kube-apiserver --version` and the /version endpoint report, as Kubernetes' own release
# build sets it (hack/lib/version.sh); without it they say v0.0.0-master.
kube_minor="${kube_version#v1.}"; kube_minor="${kube_minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

GT_KEY="$kube_version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/kube"
GT_BINDIR="$GT_DIR/$kube_version"
GT_BINARIES=(kube-apiserver etcd)
GT_FILES=(VERSIONS)
# The stamp identifies exactly what was built: a changed go.mod/go.sum, entry point or build
# flags (e.g. a patched pin within the same release) rebuilds.
GT_STAMP="$({ cat "$moddir/go.mod" "$moddir/go.sum" "$moddir/etcd/main.go"; echo "$ldflags"; } | sha256sum | awk '{ print $1 }')"
GT_NOT_CACHED="not cached (or out of date) in $GT_BINDIR; run: bash test/scripts/obtain-kube-binaries.sh"
GT_NO_GO="no Go toolchain found (need Go >= $(awk '$1 == "go" { print $2 }' "$moddir/go.mod")): install Go or set GO=/path/to/go"

gt_build() {
  local work="$1"
  gt_say "building kube-apiserver $kube_version and etcd $etcd_version with $("$go_cmd" version)"
  gt_say "first build on this machine: expect about 4-10 minutes on 2 cores; cached afterwards in $GT_BINDIR"
  # go.mod and go.sum are the pin: never let a build change them.
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  (cd "$moddir" && "$go_cmd" mod download) >"$work/download.log" 2>&1 || {
    gt_say "go mod download failed:"; cat "$work/download.log" >&2; exit 1; }
  gt_say "[etcd] downloading modules and compiling ./etcd"
  gt_go_progress etcd "$work/etcd.log" "$moddir" build -v -trimpath -ldflags="$ldflags" -o "$work/etcd" ./etcd
  gt_say "[kube-apiserver] downloading modules and compiling k8s.io/kubernetes/cmd/kube-apiserver"
  gt_go_progress kube-apiserver "$work/kube-apiserver.log" "$moddir" \
    build -v -trimpath -ldflags="$ldflags" -o "$work/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  gt_say "built: $("$work/kube-apiserver" --version), etcd $("$work/etcd" --version | awk '/^etcd Version/ { print $3 }')"
  printf 'kube-apiserver %s\netcd %s\n' "$kube_version" "$etcd_version" >"$work/VERSIONS"
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR"; else gt_say "ready in $GT_BINDIR (kube-apiserver $kube_version, etcd $etcd_version)"; fi
}
gt_obtain
