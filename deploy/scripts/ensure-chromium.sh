#!/usr/bin/env bash
# The docs page test and the dashboard's browser suite (test/browser) drive Debian's Chromium; a fresh
# machine does not have it yet.
set -euo pipefail
command -v chromium >/dev/null && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "the docs page test and the browser suite need Chromium: apt-get install chromium" >&2
  exit 1
fi
echo "installing Debian's chromium for the docs page test and the browser suite"
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
