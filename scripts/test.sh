#!/usr/bin/env bash
# `npm test`: prepares the test environment (PostgreSQL, NATS, Kubernetes and kustomize binaries, the
# ApplicationSet Go template module),
# runs every package's tests through turbo, and closes with one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
bash scripts/ensure-services.sh || exit 1
for tool in test/scripts/obtain-kube-binaries.sh test/scripts/obtain-kustomize.sh test/scripts/obtain-helm.sh libs/appset/scripts/build-gotemplate.sh; do
  if [ -f "$tool" ]; then bash "$tool" || exit 1; fi
done
find . -path ./node_modules -prune -o -type d -name .vitest -print0 | xargs -0 rm -rf
npx turbo run test --concurrency=3 --continue "$@"
rc=$?
node scripts/test-summary.mjs || rc=${rc:-1}
exit $rc
