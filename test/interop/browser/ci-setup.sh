#!/usr/bin/env bash
# Called by .ci/run: installs Chromium from Debian for the web console's
# browser test (test/insight/console-browser.test.ts), which drives it
# headless through the playwright-core devDependency (no downloaded browser).
set -euo pipefail
if command -v chromium >/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
