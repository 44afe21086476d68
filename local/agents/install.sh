#!/usr/bin/env bash
# Installs what the node agents' tests run against and build with: libvirtd
# (serving libvirt's test driver; no qemu is used), libvirt's headers for the
# cgo binding (libvirt.org/go/libvirt, build tag libvirt), Open vSwitch's
# ovsdb-server, ovs-vsctl and schema, and librados' headers (go-ceph, build
# tag ceph; the local Ceph itself is `make ceph-up`). Needs root. Idempotent.
set -euo pipefail
PKGS=(libvirt-daemon libvirt-dev openvswitch-switch librados-dev librbd-dev pkg-config)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && { echo "agent packages: installed"; exit 0; }
if [ "$(id -u)" != 0 ]; then
  echo "the agents' tests need Debian packages: run as root: $0 (missing: ${missing[*]})" >&2; exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >/dev/null
# Where systemd exists the packages start their own daemons; the tests run
# their own on private sockets instead.
for s in libvirtd openvswitch-switch ovsdb-server ovs-vswitchd; do
  service "$s" stop >/dev/null 2>&1 || true
done
echo "agent packages: installed"
