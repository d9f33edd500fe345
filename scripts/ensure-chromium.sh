#!/usr/bin/env bash
# `npm test`'s pretest: the browser tests drive Debian's Chromium (playwright-core downloads no browser).
# When it is missing, installs it if this shell can (root, with apt-get); otherwise says in one line what to
# install, so a fresh machine never gets as far as a browser test failing half-way through the suite.
set -euo pipefail

chromium=${CHROMIUM_PATH:-/usr/bin/chromium} # where test/support/browser.ts looks
[ -x "$chromium" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "pretest: installing Chromium for the browser tests (apt-get install chromium)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || true
  [ -x "$chromium" ] && exit 0
fi

echo "Chromium is needed for the browser tests: apt-get install -y chromium (or set CHROMIUM_PATH)" >&2
exit 1
