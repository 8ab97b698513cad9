#!/usr/bin/env bash
# Installs the Debian packages deploy/ha needs when they are missing, without starting their stock services
# (deploy/ha/lib.sh, ha_packages_ensure). cluster.sh and test-through-pgbouncer.sh call the same function; CI runs this
# first, with sudo when it is not root.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
packages=("${HA_PACKAGES[@]}")
ha_postgres_bin_dir >/dev/null || packages+=(postgresql)
ha_packages_ensure "${packages[@]}"
