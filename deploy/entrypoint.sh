#!/bin/sh
# Starts the Capstan service named by SERVICE (api, repo, sync or appset). Arguments go to the
# service, e.g. `--migrate-only` or sync's `--enable-impersonation`. node is exec'd (no npm in
# between) so it receives the signals tini forwards and nothing writes to the read-only root.
set -eu
case "${SERVICE:-}" in
  # The api's start script (services/api/package.json): a larger young generation lets each call's
  # short-lived objects die in fewer scavenges (services/api/README.md).
  api) exec node --max-semi-space-size=64 /app/services/api/dist/main.js "$@" ;;
  repo | sync | appset) exec node "/app/services/${SERVICE}/dist/main.js" "$@" ;;
  *)
    echo "capstan: set SERVICE to api, repo, sync or appset (got '${SERVICE:-}')" >&2
    exit 64
    ;;
esac
