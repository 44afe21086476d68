#!/usr/bin/env bash
# Prints how long each claim of the running local management plane took to
# converge: the seconds from Flux applying it (its creation) to Ready, and
# its slowest stage — the condition of its composite that became True the
# longest after the one before it, on its way to Ready (PoolsReady,
# ControlPlaneReady, ...; core's Ready last). Run it once every claim is Ready (make demo does, at the end);
# APPLIED_AT (seconds since the epoch, when Flux was given the
# Kustomizations) adds each claim's seconds from then. Also written as TSV to
# $RUN/convergence.tsv. Figures: docs/benchmarks.md.
#
#   local/demo/convergence.sh [APPLIED_AT]
set -uo pipefail
cd "$(dirname "$0")/../.."
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
[ -f "$RUN/kubeconfig" ] || { echo "no demo runs in $RUN: start it with make demo" >&2; exit 1; }
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
export KUBECONFIG=$RUN/kubeconfig
applied=${1:-0}
{
  "$KUBECTL" get controlplaneclusters,hypervisorclusters,storageclusters,openstackclusters.crossplane.c5c3.io,openstackclusters.c5c3.io -A -o json
  "$KUBECTL" get xcontrolplaneclusters,xhypervisorclusters,xstorageclusters,xopenstackclusters.crossplane.c5c3.io,xopenstackclusters.c5c3.io -o json
} | /usr/bin/python3 -c '
import json, sys
from datetime import datetime
applied = float(sys.argv[1]); out = open(sys.argv[2], "w")
def ts(s): return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; items = []
while i < len(s):
    t = s[i:].lstrip()
    if not t: break
    o, n = dec.raw_decode(t); i = len(s) - len(t) + n; items += o["items"]
claims = [o for o in items if o["metadata"].get("namespace")]
xrs = {o["metadata"]["name"]: o for o in items if not o["metadata"].get("namespace")}
rows = []
for c in claims:
    created = ts(c["metadata"]["creationTimestamp"])
    xr = xrs.get(c.get("spec", {}).get("resourceRef", {}).get("name", ""), c)
    conds = {k["type"]: k for k in xr.get("status", {}).get("conditions", [])}
    ready = conds.get("Ready")
    if not ready or ready["status"] != "True":
        rows.append((c["kind"], c["metadata"]["namespace"] + "/" + c["metadata"]["name"], created - applied if applied else 0, None, "not Ready")); continue
    # The stages are the conditions that turned True on the way to Ready:
    # not Synced and Responsive (Crossplane core), nor what changed after Ready.
    done = ts(ready["lastTransitionTime"])
    stages = sorted((ts(k["lastTransitionTime"]), t) for t, k in conds.items()
                    if k["status"] == "True" and t not in ("Synced", "Responsive") and ts(k["lastTransitionTime"]) <= done)
    prev, slow = created, ("", -1.0)
    for at, t in stages:
        if at - prev > slow[1]: slow = (t, at - prev)
        prev = max(prev, at)
    rows.append((c["kind"], c["metadata"]["namespace"] + "/" + c["metadata"]["name"], created - applied if applied else 0,
                 ts(ready["lastTransitionTime"]) - created, "%s %+ds" % (slow[0], slow[1])))
rows.sort(key=lambda r: (r[3] is None, -(r[2] + (r[3] or 0))))
fmt = "%-20s %-34s %8s %8s %10s  %s"
print(fmt % ("KIND", "CLAIM", "APPLIED", "READY", "FROM-FLUX", "SLOWEST STAGE (seconds after the stage before)"))
out.write("kind\tclaim\tapplied_s\tready_s\tfrom_flux_s\tslowest_stage\n")
for k, n, a, r, st in rows:
    total = "-" if r is None else "%d" % (a + r)
    print(fmt % (k, n, "+%ds" % a if applied else "-", "-" if r is None else "%ds" % r, total + ("s" if r is not None else ""), st))
    out.write("%s\t%s\t%d\t%s\t%s\t%s\n" % (k, n, a, "" if r is None else "%d" % r, "" if r is None else total, st))
' "$applied" "$RUN/convergence.tsv"
