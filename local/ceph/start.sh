#!/usr/bin/env bash
# Starts a throwaway single-node Ceph (1 monitor, 1 manager, 1 memstore OSD)
# on 127.0.0.1 as plain daemons, cephx on: what the provider's Ceph
# resources are tested against. Data lives in memory and is lost on stop.
#
#   COBALTCORE_CEPH_RUN   run directory (default /tmp/cobaltcore-ceph);
#                         ceph.conf and the admin keyring are written there.
# Use: ceph -c $COBALTCORE_CEPH_RUN/ceph.conf -s ; stop with stop.sh.
set -euo pipefail
D=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
OSD_BYTES=${OSD_BYTES:-1073741824}
"$(dirname "$0")/stop.sh" >/dev/null 2>&1 || true
rm -rf "$D"
mkdir -p "$D"/{run,log,mon/ceph-a,mgr/ceph-x,osd/ceph-0}
FSID=$(uuidgen)
cat > "$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:3300,v1:127.0.0.1:6789]
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $D/keyring
run dir = $D/run
admin socket = $D/run/\$cluster-\$name.asok
pid file = $D/run/\$name.pid
log file = $D/log/\$cluster-\$name.log
mon data = $D/mon/\$cluster-\$id
mgr data = $D/mgr/\$cluster-\$id
osd data = $D/osd/\$cluster-\$id
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon_max_pg_per_osd = 1000
mon data avail warn = 1
mon warn on insecure global id reclaim allowed = false
auth allow insecure global id reclaim = false
[mon]
mon cluster log file = $D/log/\$cluster.log
[osd]
osd objectstore = memstore
memstore device bytes = $OSD_BYTES
keyring = $D/osd/\$cluster-\$id/keyring
[mgr]
keyring = $D/mgr/\$cluster-\$id/keyring
mgr initial modules = rbd_support
CONF
C=(-c "$D/ceph.conf")
step() { echo "local Ceph: $*"; }
step "monitor"
ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$D/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
monmaptool --create --fsid "$FSID" --addv a '[v2:127.0.0.1:3300,v1:127.0.0.1:6789]' "$D/monmap" >/dev/null
ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring"
ceph-mon "${C[@]}" -i a
step "manager"
timeout 60 ceph "${C[@]}" auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' > "$D/mgr/ceph-x/keyring"
ceph-mgr "${C[@]}" -i x
step "OSD (memstore, $((OSD_BYTES >> 20)) MiB)"
OSD_UUID=$(uuidgen); OSD_SECRET=$(ceph-authtool --gen-print-key)
echo "{\"cephx_secret\": \"$OSD_SECRET\"}" > "$D/osd-new.json"
OSD_ID=$(timeout 60 ceph "${C[@]}" osd new "$OSD_UUID" -i "$D/osd-new.json")
ceph-authtool --create-keyring "$D/osd/ceph-$OSD_ID/keyring" --name "osd.$OSD_ID" --add-key "$OSD_SECRET" >/dev/null
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" 2>"$D/log/osd-mkfs.err"
ceph-osd "${C[@]}" -i "$OSD_ID"
for _ in $(seq 120); do
  [[ $(timeout 10 ceph "${C[@]}" osd stat -f json 2>/dev/null) == *'"num_up_osds":1'* ]] && break; sleep 0.5
done
if [[ $(timeout 10 ceph "${C[@]}" osd stat -f json 2>/dev/null) != *'"num_up_osds":1'* ]]; then
  echo "local Ceph: the OSD did not come up within 60 s; see $D/log" >&2; exit 1
fi
timeout 20 ceph "${C[@]}" auth get-key client.admin > "$D/admin.key"
echo "local Ceph up: ceph -c $D/ceph.conf -s   (monitor 127.0.0.1:6789, admin key in $D/admin.key)"
