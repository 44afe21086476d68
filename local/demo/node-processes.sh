# Sourced by rss.sh and idle.sh: the local node's processes, as "NAME PID"
# lines. The node's daemons (containerd, kubelet, kube-proxy; containerd's
# per-pod shims listed as node-containerd-shims), each package's process,
# the main process of its pod's container, named after the package, and the
# node agents the operator stand-in runs in the same containerd (namespace
# shoot-nodes), named node-agent <pool cluster>_<agent>.
node_processes() {
  local dir=$RUN/node f p pkg cid
  [ -d "$dir" ] || return 0
  for f in "$dir"/*.pid; do [ -e "$f" ] && echo "node-$(basename "$f" .pid) $(cat "$f")"; done
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $dir/containerd.sock"); do echo "node-containerd-shims $p"; done
  # shellcheck disable=SC2016 # jsonpath, not shell
  KUBECONFIG=$RUN/kubeconfig "$KUBECTL" -n crossplane-system get pods -o \
    jsonpath='{range .items[*]}{.metadata.labels.pkg\.crossplane\.io/function}{.metadata.labels.pkg\.crossplane\.io/provider} {.status.containerStatuses[0].containerID}{"\n"}{end}' 2>/dev/null |
    while read -r pkg cid; do
      [ -n "$cid" ] || continue
      p=$(ctr --address "$dir/containerd.sock" -n k8s.io tasks ls 2>/dev/null | awk -v id="${cid#containerd://}" '$1 == id {print $2}')
      [ -n "$p" ] && echo "$pkg $p"
    done
  ctr --address "$dir/containerd.sock" -n shoot-nodes tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING" {print "node-agent", $1, $2}' |
    while read -r _ id p; do echo "node-agent-${id#garden-c5c3.} $p"; done
}
