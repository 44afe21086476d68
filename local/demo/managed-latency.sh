#!/usr/bin/env bash
# Prints, for the running demo once its claims are Ready, each managed
# resource kind's seconds from creation to Ready (p50, p90, max, read from
# the Ready condition's transition; provider-kubernetes Objects left out),
# and how many of the provider's connects were refused as busy, as events
# count them: the figures of docs/benchmarks.md (stop 73).
#
#   local/demo/managed-latency.sh
set -euo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
export KUBECONFIG=${KUBECONFIG:-$RUN/kubeconfig}
kubectl get managed -o json | /usr/bin/python3 -c '
import json, sys, collections, datetime
t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
by = collections.defaultdict(list)
for i in json.load(sys.stdin)["items"]:
    if i["kind"] == "Object":
        continue
    ready = [c for c in i.get("status", {}).get("conditions", []) if c["type"] == "Ready" and c["status"] == "True"]
    if ready:
        by[i["kind"]].append((t(ready[0]["lastTransitionTime"]) - t(i["metadata"]["creationTimestamp"])).total_seconds())
for kind, v in sorted(by.items()):
    v.sort()
    n = len(v)
    print("%-22s n=%3d p50=%5.0f p90=%5.0f max=%5.0f" % (kind, n, v[n // 2], v[min(n - 1, int(n * 0.9))], v[-1]))
'
kubectl get events -A -o json | /usr/bin/python3 -c '
import json, sys, collections
c = collections.Counter()
for e in json.load(sys.stdin)["items"]:
    m, n = e.get("message", ""), e.get("count") or 1
    if "another reconcile has been connecting" in m:
        c["connects refused as busy (a login under way)"] += n
    elif "handshake timeout" in m:
        c["TLS handshake timeouts"] += n
for what, n in sorted(c.items()):
    print("%s: %d" % (what, n))
'
