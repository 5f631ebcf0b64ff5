#!/usr/bin/env bash
# `npm test`: prepares the test environment (PostgreSQL, NATS, Kubernetes and kustomize binaries, the
# ApplicationSet Go template module),
# runs every package's tests through turbo (with coverage against each package's floor), and closes
# with one summary line. `npm run test:unit` / `test:int` / `test:e2e` (this script with the tier as
# first argument) run one tier of every package: *.unit.test.ts, *.int.test.ts, test/e2e; the unit
# tier needs no services.
set -uo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
task=test
case "${1:-}" in
  unit | int | e2e) task="test:$1" && shift ;;
esac
if [ "$task" != test:unit ]; then
  bash scripts/ensure-services.sh || exit 1
fi
for tool in test/scripts/obtain-kube-binaries.sh test/scripts/obtain-kustomize.sh test/scripts/obtain-helm.sh test/scripts/obtain-registry.sh test/scripts/obtain-jsonnet.sh test/scripts/obtain-nats-server.sh test/scripts/obtain-dex.sh libs/appset/scripts/build-gotemplate.sh test/scripts/obtain-chromium.sh; do
  if [ -f "$tool" ]; then bash "$tool" || exit 1; fi
done
find . -path ./node_modules -prune -o -type d -name .vitest -print0 | xargs -0 rm -rf
npx turbo run "$task" --concurrency=3 --continue "$@"
rc=$?
node scripts/test-summary.mjs || rc=${rc:-1}
exit $rc
