#!/usr/bin/env bash
# Stops the local node that start.sh started in $NODE_DIR: kubelet and
# kube-proxy, every pod's containers, containerd; then undoes what stays
# behind a process: the pods' mounts under the node's directory, kube-proxy's
# iptables rules and the bridge. Safe to run again, or on a node that was
# killed. As root.
#
#   NODE_DIR=... [KUBE_PROXY=...] local/node/stop.sh
set -uo pipefail
: "${NODE_DIR:?}"
[ -d "$NODE_DIR" ] || exit 0
stop() { # NAME: by its PID file; TERM, then KILL after 15 s
  local f=$NODE_DIR/$1.pid p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  kill "$p" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$p" 2>/dev/null
  rm -f "$f"
}
stop kubelet
stop kube-proxy
sock=$NODE_DIR/containerd.sock
if [ -S "$sock" ] && ctr --address "$sock" version >/dev/null 2>&1; then
  # The pods' (k8s.io) and any other namespace's (the operator stand-in's
  # node agents).
  for ns in $(ctr --address "$sock" namespaces ls -q 2>/dev/null); do
    for t in $(ctr --address "$sock" -n "$ns" tasks ls -q 2>/dev/null); do
      ctr --address "$sock" -n "$ns" tasks kill -s KILL "$t" >/dev/null 2>&1
    done
  done
  sleep 1
fi
stop containerd
# A shim outlives containerd; each is a child of init named for the node's socket.
pkill -9 -f "containerd-shim-runc-v2 .*-address $sock" 2>/dev/null
# Mounts the pods left (sandboxes' /dev/shm, volumes, overlay roots),
# deepest first.
awk -v d="$NODE_DIR/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
done
# The pods' network namespaces (containerd names them cni-<uuid>).
for n in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$n" 2>/dev/null; done
if [ -n "${KUBE_PROXY:-}" ] && [ -x "$KUBE_PROXY" ]; then "$KUBE_PROXY" --cleanup >/dev/null 2>&1; fi
ip link del cni0 2>/dev/null
exit 0
