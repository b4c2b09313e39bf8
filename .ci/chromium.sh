#!/usr/bin/env bash
# The browser test (test/client/browser.test.ts) drives Debian's Chromium through
# playwright-core; nothing downloads a browser build. Install Chromium if it is missing.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  echo "ci: Chromium is missing; installing Debian's package"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null | grep -v '^\s*$' | tail -n 1 || true
