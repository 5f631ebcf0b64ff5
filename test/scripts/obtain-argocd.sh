#!/usr/bin/env bash
# Obtains Argo CD's multi-call binary (argocd-repo-server, argocd-application-controller,
# argocd-server, and argocd as git's askpass helper) and its CRDs, for the peer-argocd benchmark
# only: no test and no CI step needs them.
#
# Built from Argo CD's own Go module (github.com/argoproj/argo-cd/v3, version pinned below: v3.2.11;
# v3.2.12 as served does not compile, its controller/cache calls a settings.ValidateExternalURL that
# its util/settings lacks; v3.3 and later need a gitops-engine version the module proxy does not
# serve) with the machine's Go
# toolchain: the module is downloaded through the module proxy (checksums verified against the
# Go checksum database as usual), copied into a scratch directory and built there with its own
# go.mod/go.sum (a plain `go install pkg@version` refuses a module with replace directives).
# The entry point is a copy of Argo CD's cmd/main.go reduced to the components the benchmark runs
# (the same command packages; without the CLI, dex, notifications, the ApplicationSet controller,
# the commit, CMP and k8s-auth servers, which roughly halves a build on 2 cores); the name `argocd`
# runs the git askpass helper, which is what the repo server calls it for.
# The binary and manifests/crds/ are cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan}/argocd/<version>/,
# the same convention as obtain-kube-binaries.sh: only the first run on a machine pays the build
# (about 50 minutes on a busy 2-core machine with an empty Go build cache, 11 with the dependencies compiled); later runs return at once.
#
# Usage: test/scripts/obtain-argocd.sh [--check] [--force] [--print-dir]
#   --check      exit 0 if the binary is cached, 1 if not; never build
#   --force      rebuild even if cached
#   --print-dir  print only the cache directory on stdout (progress goes to stderr)
#
# Environment: CAPSTAN_CACHE (cache root), ARGOCD_VERSION (override the pin),
# GO (go command; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
# shellcheck source=lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"

GT_NAME=obtain-argocd
gt_parse_args --print-dir "$@"
version="${ARGOCD_VERSION:-v3.2.11}"
module=github.com/argoproj/argo-cd/v3
GT_KEY="$version"
GT_DIR="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/argocd"
GT_BINDIR="$GT_DIR/$version"
GT_BINARIES=(argocd)
GT_FILES=(crds)
GT_STAMP="$module@$version peer-main-1"

gt_build() {
  local work="$1" dir
  gt_say "building $module@$version with $("$go_cmd" version)"
  dir="$("$go_cmd" mod download -json "$module@$version" | awk -F'"' '$2 == "Dir" { print $4 }')"
  [[ -d "$dir" ]] || { gt_say "go mod download $module@$version gave no directory"; exit 1; }
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  cp -r "$work/src/manifests/crds" "$work/crds"
  mkdir -p "$work/src/cmd/peer"
  cat >"$work/src/cmd/peer/main.go" <<'GO'
// The components peer-argocd runs, dispatched on the binary's name as Argo CD's cmd/main.go does.
package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	apiserver "github.com/argoproj/argo-cd/v3/cmd/argocd-server/commands"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() {
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var command *cobra.Command
	switch name {
	case "argocd-server":
		command = apiserver.NewCommand()
	case "argocd-application-controller":
		command = appcontroller.NewCommand()
	case "argocd-repo-server":
		command = reposerver.NewCommand()
	default:
		command = gitaskpass.NewCommand()
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
GO
  # The version Argo CD reports (its Makefile sets it the same way).
  local ldflags="-s -w -X $module/common.version=${version#v}"
  GOFLAGS="${GOFLAGS:-} -mod=readonly" \
    gt_go_progress argocd "$work/build.log" "$work/src" build -v -trimpath -ldflags="$ldflags" -o "$work/argocd" ./cmd/peer
  rm -rf "$work/src"
  gt_say "built $work/argocd ($("$work/argocd" --help >/dev/null 2>&1 && echo runs || echo 'does not run'))"
}
gt_finish() {
  if [[ $gt_print == 1 ]]; then echo "$GT_BINDIR"; else gt_say "ready in $GT_BINDIR (Argo CD $version)"; fi
}
gt_obtain
