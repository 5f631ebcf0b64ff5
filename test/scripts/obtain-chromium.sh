#!/usr/bin/env bash
# Debian's chromium for the web UI's end-to-end story and the UI benchmark (playwright-core drives it
# at /usr/bin/chromium; Playwright's own browser download is not reachable from our machines).
# Idempotent: does nothing when chromium is already installed.
set -euo pipefail
if command -v chromium >/dev/null; then exit 0; fi
echo "capstan: installing chromium from Debian's packages"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
