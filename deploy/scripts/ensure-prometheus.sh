#!/usr/bin/env bash
# The monitoring tests run Debian's Prometheus against a running stack (every dashboard query and
# rule expression must find series) and promtool on the alert rules' unit tests; a fresh machine
# has neither.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "the monitoring tests need Debian's prometheus (with promtool): apt-get install prometheus" >&2
  exit 1
fi
echo "installing Debian's prometheus (and promtool) for the monitoring tests"
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The tests start their own Prometheus on free ports: a packaged service, where an init system
# starts one, is left alone.
