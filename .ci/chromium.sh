#!/usr/bin/env bash
# CI: Debian's headless Chromium for the browser tests (test/e2e/graphiql.test.ts,
# test/client/browser.test.ts), driven by playwright-core, which downloads no browser of its
# own. Under CI=true those tests fail rather than skip without it.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  echo "ci: Chromium is missing; installing Debian's package"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "ci: $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
