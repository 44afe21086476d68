#!/usr/bin/env bash
# Starts a real Kubernetes node on this machine for the local management
# plane: containerd and runc (Debian's), the CNI bridge plugin (Debian's), and
# kubelet and kube-proxy of the pinned Kubernetes (make tools). Crossplane
# core's Deployment runtime runs the packages' pods on it, pulled from the
# local registry.
#
# Everything lives under $NODE_DIR (containerd's root and socket, kubelet's
# root, the CNI configuration and address leases), so a node never touches
# another one's state; stop.sh removes it. As root.
#
#   NODE_DIR=... KUBECONFIGS=dir-with-{kubelet,kube-proxy}.kubeconfig CLIENT_CA=the-API-server's-client-CA \
#   NODE=node-1 NODE_IP=10.244.0.1 \
#   POD_CIDR=10.244.0.0/24 PAUSE_TAR=pause.tar REGISTRY=127.0.0.1:5050 REGISTRY_CA=ca.crt [MIRRORED=xpkg.c5c3.io] \
#   KUBELET=... KUBE_PROXY=... local/node/start.sh
#
# The bridge (cni0, holding NODE_IP) must exist before the API server starts,
# which advertises that address: `start.sh bridge` creates only it.
set -euo pipefail
: "${NODE_IP:?}" "${POD_CIDR:?}"
bridge() {
  # This kernel has no dummy links; the CNI bridge doubles as the node's
  # address (pods reach the API server and the node there).
  sysctl -qw net.ipv4.ip_forward=1
  ip link show cni0 >/dev/null 2>&1 || ip link add cni0 type bridge
  # Not "ip addr show | grep -q": under pipefail, grep leaving at the first
  # match can fail ip with SIGPIPE, and the address already there is added
  # again ("Address already assigned": a cold CI run's node failed so).
  local addrs
  addrs=$(ip -4 -o addr show dev cni0)
  [[ $addrs == *"inet $NODE_IP/"* ]] || ip addr add "$NODE_IP/${POD_CIDR#*/}" dev cni0
  ip link set cni0 up
}
bridge
[ "${1:-}" = bridge ] && exit 0

here=$(cd "$(dirname "$0")" && pwd)
: "${NODE_DIR:?}" "${KUBECTL:?}" "${KUBECONFIGS:?}" "${CLIENT_CA:?}" "${NODE:?}" "${PAUSE_TAR:?}" "${REGISTRY:?}" "${REGISTRY_CA:?}" "${KUBELET:?}" "${KUBE_PROXY:?}"
for c in containerd runc ctr; do command -v $c >/dev/null || { echo "no $c: run make demo-deps" >&2; exit 1; }; done
[ -x /usr/lib/cni/bridge ] || { echo "no CNI plugins in /usr/lib/cni: run make demo-deps" >&2; exit 1; }
mkdir -p "$NODE_DIR"/{cni/net.d,cni/ipam,certs.d/"$REGISTRY",kubelet,logs}
bg() { local n=$1; shift; "$@" >"$NODE_DIR/logs/$n.log" 2>&1 & echo $! >"$NODE_DIR/$n.pid"; }
wait_for() { local t=$1 what=$2; shift 2
  for _ in $(seq "$t"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "FAILED: $what (waited ${t}s; logs in $NODE_DIR/logs)" >&2; return 1; }
sock=$NODE_DIR/containerd.sock

# containerd. restrict_oom_score_adj: this VM forbids lowering a process's
# oom_score_adj, even as root, which kubelet asks for every pod sandbox;
# without it no pod starts ("can't get final child's PID from pipe").
sed -e "s|@NODE_DIR@|$NODE_DIR|g" "$here/containerd.toml" >"$NODE_DIR/containerd.toml"
sed -e "s|@POD_CIDR@|$POD_CIDR|g" -e "s|@NODE_DIR@|$NODE_DIR|g" "$here/10-bridge.conflist" >"$NODE_DIR/cni/net.d/10-bridge.conflist"
# The registry's CA, as a landscape's nodes trust their registry's. The
# registries of MIRRORED (space-separated hosts) are pulled from REGISTRY
# instead, as a landscape's nodes mirror the public registries to its own.
printf 'server = "https://%s"\n[host."https://%s"]\n  capabilities = ["pull", "resolve", "push"]\n  ca = "%s"\n' \
  "$REGISTRY" "$REGISTRY" "$REGISTRY_CA" >"$NODE_DIR/certs.d/$REGISTRY/hosts.toml"
for m in ${MIRRORED:-}; do
  mkdir -p "$NODE_DIR/certs.d/$m"
  printf 'server = "https://%s"\n[host."https://%s"]\n  capabilities = ["pull", "resolve"]\n  ca = "%s"\n' \
    "$m" "$REGISTRY" "$REGISTRY_CA" >"$NODE_DIR/certs.d/$m/hosts.toml"
done
bg containerd containerd --config "$NODE_DIR/containerd.toml"
wait_for 30 "containerd does not answer on $sock" ctr --address "$sock" version
# The sandbox image: no registry.k8s.io here.
ctr --address "$sock" -n k8s.io images import "$PAUSE_TAR" >/dev/null

sed -e "s|@NODE_DIR@|$NODE_DIR|g" -e "s|@NODE_IP@|$NODE_IP|g" -e "s|@CLIENT_CA@|$CLIENT_CA|g" "$here/kubelet.yaml" >"$NODE_DIR/kubelet.yaml"
bg kubelet "$KUBELET" --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$KUBECONFIGS/kubelet.kubeconfig" \
  --hostname-override="$NODE" --node-ip="$NODE_IP" --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki"
bg kube-proxy "$KUBE_PROXY" --kubeconfig="$KUBECONFIGS/kube-proxy.kubeconfig" --hostname-override="$NODE" \
  --cluster-cidr="$POD_CIDR" --proxy-mode=iptables --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256
wait_for 120 "node $NODE is not Ready" env KUBECONFIG="$KUBECONFIGS/kubelet.kubeconfig" \
  sh -c "$KUBECTL get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
