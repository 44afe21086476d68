#!/usr/bin/env bash
# Starts a throwaway Ceph on 127.0.0.1 as plain daemons, cephx on, data in
# memory (memstore OSDs), lost on stop. By default 1 monitor, 1 manager and
# 1 OSD: what the provider's Ceph resources are tested against.
#
#   COBALTCORE_CEPH_RUN   run directory (default /tmp/cobaltcore-ceph);
#                         ceph.conf and the admin keyring are written there.
#   OSD_BYTES             the size each OSD reports (default 2 PiB: the
#                         local landscape's storage pools share this Ceph,
#                         and each shares out at most what Ceph reports;
#                         memstore holds only what is written, in memory)
#
# A stretched Ceph, laid out as Rook lays out a pool cluster over two zones
# (what the provider's StretchMode is tested against, and the local
# landscape's stretched storage pool runs on):
#
#   CEPH_MONS        monitors as id=node ..., default "a": each reports node
#                    as its host (NODE_NAME, which Rook sets to the pod's
#                    node and Ceph reads as the host name)
#   CEPH_MON_PORT, CEPH_MON_V1_PORT   the first monitor's msgr2 and msgr1
#                    ports (default 3300, 6789); the next ones count up
#   CEPH_OSD_HOSTS   one OSD per zone/host ..., in CRUSH buckets of type zone
#                    and host under root default, of equal weight; default:
#                    one OSD placed by Ceph on this machine's host
#   CEPH_DEVICE_CLASS the OSDs' device class (default: Ceph's own)
#
# Use: ceph -c $COBALTCORE_CEPH_RUN/ceph.conf -s ; stop with stop.sh.
set -euo pipefail
D=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
OSD_BYTES=${OSD_BYTES:-$((2 << 50))}
read -r -a MONS <<<"${CEPH_MONS:-a}"
read -r -a OSD_HOSTS <<<"${CEPH_OSD_HOSTS:-}"
MON_PORT=${CEPH_MON_PORT:-3300}
MON_V1_PORT=${CEPH_MON_V1_PORT:-6789}
"$(dirname "$0")/stop.sh" >/dev/null 2>&1 || true
rm -rf "$D"
mkdir -p "$D"/{run,log,mgr/ceph-x}
FSID=$(uuidgen)
# The monitors' addresses: each on msgr2 and msgr1, the ports counting up.
mon_addr=() mon_host=""
for i in "${!MONS[@]}"; do
  mon_addr+=("[v2:127.0.0.1:$((MON_PORT + i)),v1:127.0.0.1:$((MON_V1_PORT + i))]")
  mon_host+="${mon_host:+,}${mon_addr[$i]}"
done
# A single OSD may hold every replica (chooseleaf over OSDs); placed OSDs
# are chosen by the CRUSH rules over their buckets.
chooseleaf=0
[[ ${#OSD_HOSTS[@]} -gt 0 ]] && chooseleaf=1
cat > "$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = $mon_host
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
osd crush chooseleaf type = $chooseleaf
osd crush update on start = $([[ ${#OSD_HOSTS[@]} -gt 0 ]] && echo false || echo true)
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
# Every OSD weighs 1 in CRUSH, whatever it reports: a weight taken from
# OSD_BYTES (2048 for 2 PiB) is past what crushtool compiles (at most 100),
# and the provider compiles a stretched pool's rule with it.
osd crush initial weight = 1
osd class update on start = $([[ -n ${CEPH_DEVICE_CLASS:-} ]] && echo false || echo true)
keyring = $D/osd/\$cluster-\$id/keyring
[mgr]
keyring = $D/mgr/\$cluster-\$id/keyring
mgr initial modules = rbd_support
CONF
C=(-c "$D/ceph.conf")
step() { echo "local Ceph: $*"; }
step "monitors: ${MONS[*]}"
ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$D/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
monmap=()
for i in "${!MONS[@]}"; do monmap+=(--addv "${MONS[$i]%%=*}" "${mon_addr[$i]}"); done
monmaptool --create --fsid "$FSID" "${monmap[@]}" "$D/monmap" >/dev/null
for m in "${MONS[@]}"; do
  id=${m%%=*}
  mkdir -p "$D/mon/ceph-$id"
  ceph-mon "${C[@]}" --mkfs -i "$id" --monmap "$D/monmap" --keyring "$D/keyring"
  if [[ $m == *=* ]]; then NODE_NAME=${m#*=} ceph-mon "${C[@]}" -i "$id"; else ceph-mon "${C[@]}" -i "$id"; fi
done
step "manager"
timeout 60 ceph "${C[@]}" auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' > "$D/mgr/ceph-x/keyring"
ceph-mgr "${C[@]}" -i x
osd_count=$(( ${#OSD_HOSTS[@]} > 0 ? ${#OSD_HOSTS[@]} : 1 ))
step "$osd_count OSD(s) (memstore, $((OSD_BYTES >> 30)) GiB each)${OSD_HOSTS[*]:+ on ${OSD_HOSTS[*]}}"
for ((n = 0; n < osd_count; n++)); do
  OSD_UUID=$(uuidgen); OSD_SECRET=$(ceph-authtool --gen-print-key)
  echo "{\"cephx_secret\": \"$OSD_SECRET\"}" > "$D/osd-new.json"
  OSD_ID=$(timeout 60 ceph "${C[@]}" osd new "$OSD_UUID" -i "$D/osd-new.json")
  mkdir -p "$D/osd/ceph-$OSD_ID"
  ceph-authtool --create-keyring "$D/osd/ceph-$OSD_ID/keyring" --name "osd.$OSD_ID" --add-key "$OSD_SECRET" >/dev/null
  if [[ ${#OSD_HOSTS[@]} -gt 0 ]]; then
    zone=${OSD_HOSTS[$n]%%/*} host=${OSD_HOSTS[$n]#*/}
    timeout 30 ceph "${C[@]}" osd crush add-bucket "$zone" zone root=default >/dev/null 2>&1 || true
    timeout 30 ceph "${C[@]}" osd crush add-bucket "$host" host "zone=$zone" >/dev/null 2>>"$D/log/setup.log"
    timeout 30 ceph "${C[@]}" osd crush add "osd.$OSD_ID" 1.0 "host=$host" >/dev/null 2>>"$D/log/setup.log"
  fi
  if [[ -n ${CEPH_DEVICE_CLASS:-} ]]; then
    timeout 30 ceph "${C[@]}" osd crush rm-device-class "osd.$OSD_ID" >/dev/null 2>&1 || true
    timeout 30 ceph "${C[@]}" osd crush set-device-class "$CEPH_DEVICE_CLASS" "osd.$OSD_ID" >/dev/null 2>>"$D/log/setup.log"
  fi
  ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" 2>"$D/log/osd-mkfs.err"
  ceph-osd "${C[@]}" -i "$OSD_ID"
done
up() { [[ $(timeout 10 ceph "${C[@]}" osd stat -f json 2>/dev/null) == *"\"num_up_osds\":$osd_count"* ]]; }
for _ in $(seq 120); do up && break; sleep 0.5; done
if ! up; then
  echo "local Ceph: the OSDs did not come up within 60 s; see $D/log" >&2; exit 1
fi
timeout 20 ceph "${C[@]}" auth get-key client.admin > "$D/admin.key"
echo "local Ceph up: ceph -c $D/ceph.conf -s   (monitors $mon_host, admin key in $D/admin.key)"
