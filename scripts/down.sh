#!/usr/bin/env bash
# `npm run down`: stops everything `npm run up` started and removes .capstan/ except the logs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules/tsx ]; then
  echo "capstan down: dependencies are not installed (nothing was started by npm run up)"
  exit 0
fi
exec npx --no-install tsx scripts/demo/down.ts
