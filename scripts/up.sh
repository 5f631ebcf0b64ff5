#!/usr/bin/env bash
# `npm run up`: installs, makes sure PostgreSQL and NATS run, obtains the Kubernetes binaries,
# kustomize, helm, the OCI registry (CNCF Distribution) and Dex (OIDC), builds, then hands over to
# scripts/demo/up.ts, which starts the stack in the background, runs the guestbook story with the
# capstan CLI and leaves everything running (`npm run down` stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
logs=.capstan/logs
mkdir -p "$logs"
started=$SECONDS
export CAPSTAN_UP_STARTED_MS=$(date +%s%3N)
say() { printf 'capstan up %4ss  ▸ %s\n' "$((SECONDS - started))" "$*"; }
ok() { printf 'capstan up %4ss  ✓ %s\n' "$((SECONDS - started))" "$*"; }
# Runs a step with its output in a log file; on failure shows the end of that log.
quietly() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    echo "capstan up: failed: $*  (the end of $log:)" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

# npm ci when node_modules is missing or the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "install dependencies (npm ci; log: $logs/install.log)"
  # scripts/complete-lockfile.mjs keeps the lockfile acceptable to npm ci (docs/development.md).
  quietly "$logs/install.log" npm ci --no-audit --no-fund
  ok "dependencies installed"
else
  ok "dependencies are up to date with package-lock.json"
fi

say "make sure PostgreSQL and NATS (JetStream) run on loopback"
bash scripts/ensure-services.sh | sed 's/^/              /'

say "obtain kube-apiserver, etcd, kustomize, helm, the OCI registry and Dex (built once from their Go modules, cached in ${CAPSTAN_CACHE:-$HOME/.cache/capstan})"
for tool in obtain-kube-binaries obtain-kustomize obtain-helm obtain-registry obtain-dex; do
  if bash "test/scripts/$tool.sh" --check >/dev/null 2>&1; then
    ok "$tool: cached"
  else
    say "$tool: building (a few minutes the first time)"
    bash "test/scripts/$tool.sh" 2>&1 | sed -u 's/^/              /'
    ok "$tool: built"
  fi
done

say "build (npm run build; log: $logs/build.log)"
quietly "$logs/build.log" npm run build
ok "built"

exec npx --no-install tsx scripts/demo/up.ts
