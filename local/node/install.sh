#!/usr/bin/env bash
# Installs what the local node runs on (local/node/start.sh):
# Debian's containerd, runc and CNI plugins, and the iptables and conntrack
# tools kube-proxy uses. As root, once; a second run only checks.
set -euo pipefail
have() { command -v containerd >/dev/null && command -v runc >/dev/null && [ -x /usr/lib/cni/bridge ] &&
  command -v iptables >/dev/null && command -v conntrack >/dev/null; }
have && { echo "node: installed"; exit 0; }
if [ "$(id -u)" != 0 ]; then
  echo "the local node needs Debian's containerd, runc, containernetworking-plugins, iptables, conntrack: run as root: $0" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends containerd runc containernetworking-plugins iptables conntrack >/dev/null
# The package's service would hold the default socket and root; the node runs
# its own containerd (no systemd here, so nothing starts; elsewhere, stop it).
service containerd stop >/dev/null 2>&1 || true
have && echo "node: installed"
