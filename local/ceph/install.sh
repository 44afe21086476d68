#!/usr/bin/env bash
# Installs the Debian packages the local Ceph needs (monitor, manager, OSD,
# CLI, crushtool) and librados/librbd headers for the provider's Ceph support
# (go-ceph, build tag ceph). Needs root. Idempotent.
set -euo pipefail
PKGS=(ceph-mon ceph-mgr ceph-osd ceph-common ceph-base librados-dev librbd-dev uuid-runtime)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && { echo "local Ceph packages: installed"; exit 0; }
if [ "$(id -u)" != 0 ]; then
  echo "the local Ceph needs Debian packages: run as root: $0 (missing: ${missing[*]})" >&2; exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >/dev/null
# Where systemd exists the packages start their own daemons; the local
# cluster runs its own processes on loopback instead.
for s in ceph-mon.target ceph-mgr.target ceph-osd.target ceph.target; do
  service "$s" stop >/dev/null 2>&1 || true
done
echo "local Ceph packages: installed"
