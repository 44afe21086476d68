#!/usr/bin/env bash
# Installs the Debian packages the local OpenStack needs (Keystone, Placement,
# nova-api, cinder-api, neutron-server with ML2/OVN, MariaDB, memcached, OVN central).
# Needs root. Idempotent: does nothing when everything is installed.
set -euo pipefail
PKGS=(keystone uwsgi uwsgi-plugin-python3 python3-keystoneclient python3-openstackclient
      placement-api nova-api cinder-api neutron-server python3-pymysql mariadb-server memcached python3-pymemcache ovn-central)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && { echo "local OpenStack packages: installed"; exit 0; }
if [ "$(id -u)" != 0 ]; then
  echo "the local OpenStack needs Debian packages: run as root: $0 (missing: ${missing[*]})" >&2; exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >/dev/null
# The Debian packages start their own services through invoke-rc.d where
# systemd exists; the local stack runs its own processes on loopback instead.
for s in keystone nova-api cinder-api neutron-api neutron-rpc-server placement-api mariadb memcached ovn-central ovn-northd; do
  service "$s" stop >/dev/null 2>&1 || true
done
echo "local OpenStack packages: installed"
