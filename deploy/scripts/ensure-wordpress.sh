#!/usr/bin/env bash
# The WordPress publishing tests run Debian's WordPress under `php -S` against the local MariaDB;
# a fresh machine has neither WordPress nor PHP yet.
set -euo pipefail
if command -v php >/dev/null && php -m 2>/dev/null | grep -qx mysqli && [ -f /usr/share/wordpress/wp-settings.php ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "the WordPress publishing tests need Debian's wordpress, php-cli and php-mysql: apt-get install wordpress php-cli php-mysql" >&2
  exit 1
fi
echo "installing Debian's wordpress, php-cli and php-mysql for the WordPress publishing tests"
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordpress php-cli php-mysql >/dev/null
