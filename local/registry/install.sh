#!/usr/bin/env bash
# Installs the local OCI registry the demo pushes every package to and core
# pulls them from: Debian's docker-registry (the CNCF distribution registry,
# 2.8). local/demo/up.sh runs its own instance on 127.0.0.1:5050 with TLS;
# the package's service, where systemd starts it, is stopped. Needs root.
# Idempotent.
set -euo pipefail
command -v docker-registry >/dev/null && { echo "registry: installed"; exit 0; }
if [ "$(id -u)" != 0 ]; then
  echo "the demo needs Debian's docker-registry: run as root: $0" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends docker-registry >/dev/null
service docker-registry stop >/dev/null 2>&1 || true
echo "registry: installed"
