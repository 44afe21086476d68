#!/usr/bin/env bash
# Starts a throwaway OpenStack on 127.0.0.1 for tests and the local demo:
# OVN (NB, SB, northd), MariaDB, memcached, Keystone, Placement, nova-api, cinder-api and
# neutron-server (ML2/OVN), as plain background processes (no systemd).
# Fake nova-compute hosts and cinder-volume backends are registered in the
# databases, so aggregates can hold hosts and volume types can name backends
# without hypervisors or storage.
#
#   COBALTCORE_OPENSTACK_RUN  run directory (default /tmp/cobaltcore-openstack; wiped unless KEEP=1)
#   COMPUTE_HOSTS             fake compute hosts (default "hv-1 hv-2")
#   CINDER_BACKENDS           fake cinder-volume backends (default: one per example storage pool,
#                             "ceph-st-pool-{a,b,fin,s,us}", and st-pool-encrypted, the storage
#                             pool the C5C3 docs' finance-prod names, which make e2e claims)
#
# Every API serves HTTPS (and OVN's databases ssl: on 6643 and 6644), as a landscape's do, with a certificate for
# 127.0.0.1 and localhost from a local CA ($RUN/tls/ca.crt, kept across
# restarts with KEEP=1): the catalog's public endpoints are https://; the
# services reach each other over it too, trusting the CA through
# REQUESTS_CA_BUNDLE.
#
# Admin credential: admin / secret, project admin, domain Default, region
# RegionOne, Keystone https://127.0.0.1:5000/v3 (also written to
# $RUN/clouds.yaml, cloud "admin", with cacert: $RUN/tls/ca.crt). Stop with
# stop.sh. Packages: install.sh.
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
COMPUTE_HOSTS=${COMPUTE_HOSTS:-"hv-1 hv-2"}
CINDER_BACKENDS=${CINDER_BACKENDS:-"ceph-st-pool-a ceph-st-pool-b ceph-st-pool-fin ceph-st-pool-s ceph-st-pool-us ceph-st-pool-encrypted"}
PY=/usr/bin/python3   # the distribution's python, with the OpenStack modules
KS=https://127.0.0.1:5000/v3
# Every service keeps its data in the one MariaDB, as deployed OpenStacks do:
# on SQLite, concurrent writers of Keystone's and nova-api's processes
# failed at once with "database is locked" (500s under make e2e's load).
DB=mysql+pymysql://root@127.0.0.1:3306

for cmd in keystone-manage uwsgi nova-manage cinder-api neutron-server placement-manage mariadbd memcached ovsdb-server ovn-northd; do
  command -v "$cmd" >/dev/null || { echo "$cmd not found: run $H/install.sh (as root)" >&2; exit 1; }
done
for port in 5000 8774 8776 8778 9696 3306 11211 6641 6642 6643 6644; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
    echo "port $port on 127.0.0.1 is in use (a local OpenStack already running? $H/stop.sh)" >&2; exit 1
  fi
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$RUN"
mkdir -p "$RUN"/{ovn,mariadb,memcached,keystone,placement,nova/lock,cinder/lock,neutron/lock,tls}

# The local CA and the APIs' serving certificate. The services and their
# Python clients (keystoneauth, requests) trust the CA beside the system's.
T=$RUN/tls
if [ ! -s "$T/ca.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cobaltcore local OpenStack CA" \
    -keyout "$T/ca.key" -out "$T/ca.crt" 2>/dev/null
fi
if [ ! -s "$T/server.crt" ]; then
  printf 'subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n' >"$T/server.ext"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$T/server.key" -out "$T/server.csr" 2>/dev/null
  openssl x509 -req -in "$T/server.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -days 3650 \
    -extfile "$T/server.ext" -out "$T/server.crt" 2>/dev/null
fi
cat /etc/ssl/certs/ca-certificates.crt "$T/ca.crt" >"$T/bundle.crt"
export REQUESTS_CA_BUNDLE=$T/bundle.crt

# wait_for NAME LOG CMD...: runs CMD until it succeeds, at most 120 s.
wait_for() {
  local name=$1 log=$2; shift 2
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && { echo "  $name ready"; return 0; }; sleep 0.2; done
  echo "$name did not come up in 120 s; see $log" >&2; exit 1
}
http_up() { local code; code=$(curl -s --cacert "$T/ca.crt" -o /dev/null -w '%{http_code}' "$1") && [ "$code" != 000 ] && [ "$code" -lt 500 ]; }
auth() { cat <<CONF
[keystone_authtoken]
www_authenticate_uri = $KS
auth_url = $KS
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = secret
memcached_servers = 127.0.0.1:11211
CONF
}
# uwsgi_app NAME PORT WSGI THREADS ENV [PROCESSES]: an HTTPS socket with
# "Connection: close": uwsgi's plain HTTP/1.0 sockets break Go's keep-alive
# connections. nova-api runs on
# eventlet, whose hub breaks ("greenlet.error: cannot switch to a different
# thread") and hangs the worker when uwsgi gives it a second thread: it
# scales by processes instead.
uwsgi_app() {
  uwsgi --plugin python3 --https-socket "127.0.0.1:$2,$T/server.crt,$T/server.key" --chdir "$RUN/$1" --wsgi-file "$3" \
    --master --processes "${6:-1}" --threads "${4:-2}" --lazy-apps --die-on-term --buffer-size 65535 \
    --add-header "Connection: close" --env "$5" --env "REQUESTS_CA_BUNDLE=$T/bundle.crt" \
    --pidfile "$RUN/$1/uwsgi.pid" --daemonize "$RUN/$1/uwsgi.log"
}

echo "OVN"
D=$RUN/ovn
ovsdb-tool create "$D/nb.db" /usr/share/ovn/ovn-nb.ovsschema
ovsdb-tool create "$D/sb.db" /usr/share/ovn/ovn-sb.ovsschema
# Each database also serves ssl: (NB 6643, SB 6644) with the APIs' serving
# certificate, and admits clients whose certificate the local CA signed, as
# a landscape's OVN does: the demo's clouds reach it there (their client
# certificates minted by the operator stand-in). tcp: stays for Neutron
# and the scripts' ovn-nbctl.
for db in nb:6641:6643:OVN_Northbound:NB_Global sb:6642:6644:OVN_Southbound:SB_Global; do
  IFS=: read -r n port sslport schema global <<<"$db"
  ovsdb-server "$D/$n.db" --detach --no-chdir --pidfile="$D/$n.pid" --log-file="$D/$n.log" \
    --unixctl="$D/$n.ctl" --remote=punix:"$D/$n.sock" --remote=ptcp:$port:127.0.0.1 --remote=pssl:$sslport:127.0.0.1 \
    --private-key="$T/server.key" --certificate="$T/server.crt" --ca-cert="$T/ca.crt" \
    --remote=db:$schema,$global,connections
done
ovn-nbctl --db=unix:"$D/nb.sock" --no-leader-only init
ovn-sbctl --db=unix:"$D/sb.sock" --no-leader-only init
ovn-northd --detach --no-chdir --pidfile="$D/northd.pid" --log-file="$D/northd.log" --unixctl="$D/northd.ctl" \
  --ovnnb-db=unix:"$D/nb.sock" --ovnsb-db=unix:"$D/sb.sock"
echo "  ovn ready"

echo "MariaDB"
D=$RUN/mariadb
mariadb-install-db --no-defaults --datadir="$D/data" --user=root --auth-root-authentication-method=normal \
  --skip-test-db > "$D/install.log" 2>&1
nohup mariadbd --no-defaults --datadir="$D/data" --socket="$D/mysql.sock" --port=3306 --bind-address=127.0.0.1 \
  --pid-file="$D/mariadb.pid" --user=root --skip-name-resolve --log-error="$D/error.log" \
  --innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=0 --max-connections=500 >/dev/null 2>&1 &
wait_for mariadb "$D/error.log" mariadb -S "$D/mysql.sock" -u root -e 'select 1'
mariadb -S "$D/mysql.sock" -u root -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; CREATE DATABASE keystone; CREATE DATABASE placement; CREATE DATABASE nova_api; CREATE DATABASE nova_cell0; CREATE DATABASE nova_cell1; CREATE DATABASE cinder; CREATE DATABASE neutron;"

# Keystone's cache and the services' token caches, as in a deployed
# OpenStack. Without it every Keystone request rebuilt tokens, roles and
# catalogs from the database (~0.2 s of CPU each): under make e2e's load
# Keystone fell minutes behind.
echo "memcached"
memcached -d -l 127.0.0.1 -p 11211 -m 64 -u root -P "$RUN/memcached/memcached.pid"
wait_for memcached "$RUN/memcached" bash -c 'exec 3<>/dev/tcp/127.0.0.1/11211'

echo "Keystone"
D=$RUN/keystone
cat > "$D/keystone.conf" <<CONF
[DEFAULT]
log_dir = $D
log_file = keystone.log
[database]
connection = $DB/keystone
[token]
provider = fernet
[fernet_tokens]
key_repository = $D/fernet-keys
[fernet_receipts]
key_repository = $D/fernet-keys
[credential]
key_repository = $D/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.pymemcache
memcache_servers = 127.0.0.1:11211
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
KM="keystone-manage --config-file $D/keystone.conf"
$KM db_sync 2>"$D/manage.err"
$KM fernet_setup --keystone-user root --keystone-group root 2>>"$D/manage.err"
$KM credential_setup --keystone-user root --keystone-group root 2>>"$D/manage.err"
$KM bootstrap --bootstrap-password secret --bootstrap-admin-url $KS/ --bootstrap-internal-url $KS/ \
  --bootstrap-public-url $KS/ --bootstrap-region-id RegionOne 2>>"$D/manage.err"
uwsgi_app keystone 5000 /usr/bin/keystone-wsgi-public 1 "OS_KEYSTONE_CONFIG_FILES=$D/keystone.conf" 3
# Every other service and the provider wait on Keystone: on 2 cores under
# the demo's load (load average 20-25) it got too little CPU to answer in
# time, so it runs ahead of the rest (nice -10; root may lower niceness).
sleep 1; renice -n -10 -p "$(cat "$D/uwsgi.pid")" $(pgrep -P "$(cat "$D/uwsgi.pid")") >/dev/null 2>&1 || true
wait_for keystone "$D/uwsgi.log" curl -sf --cacert "$T/ca.crt" $KS/
$PY "$H/register-services.py" > "$D/register.log"

echo "Placement"
D=$RUN/placement
{ cat <<CONF
[DEFAULT]
log_dir = $D
log_file = placement.log
[placement_database]
connection = $DB/placement
[api]
auth_strategy = keystone
CONF
auth placement; } > "$D/placement.conf"
placement-manage --config-file "$D/placement.conf" db sync
uwsgi_app placement 8778 /usr/bin/placement-api 1 "OS_PLACEMENT_CONFIG_DIR=$D"
wait_for placement "$D/uwsgi.log" curl -sf --cacert "$T/ca.crt" https://127.0.0.1:8778/

echo "nova-api"
D=$RUN/nova
cp /etc/nova/api-paste.ini "$D/"
{ cat <<CONF
[DEFAULT]
log_dir = $D
log_file = nova-api.log
transport_url = fake://
enabled_apis = osapi_compute
state_path = $D
service_down_time = 31536000
[api]
auth_strategy = keystone
[api_database]
connection = $DB/nova_api
[database]
connection = $DB/nova_cell1
[oslo_concurrency]
lock_path = $D/lock
[oslo_messaging_notifications]
driver = noop
[wsgi]
api_paste_config = $D/api-paste.ini
[placement]
region_name = RegionOne
auth_url = $KS
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = placement
password = secret
CONF
auth nova; } > "$D/nova.conf"
NM="nova-manage --config-file $D/nova.conf"
{ $NM api_db sync
  $NM cell_v2 map_cell0 --database_connection "$DB/nova_cell0"
  $NM cell_v2 create_cell --name cell1 --database_connection "$DB/nova_cell1" --transport-url fake://
  $NM db sync; } > "$D/manage.log" 2>&1
uwsgi_app nova 8774 /usr/bin/nova-api-wsgi 1 "OS_NOVA_CONFIG_DIR=$D" 2
wait_for nova-api "$D/uwsgi.log" curl -sf --cacert "$T/ca.crt" https://127.0.0.1:8774/

echo "cinder-api"
D=$RUN/cinder
{ cat <<CONF
[DEFAULT]
log_dir = $D
log_file = cinder-api.log
state_path = $D
transport_url = fake://
auth_strategy = keystone
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = 8776
osapi_volume_workers = 1
osapi_volume_use_ssl = true
api_paste_config = /etc/cinder/api-paste.ini
enabled_backends =
[ssl]
cert_file = $T/server.crt
key_file = $T/server.key
[database]
connection = $DB/cinder
[oslo_concurrency]
lock_path = $D/lock
[oslo_messaging_notifications]
driver = noop
CONF
auth cinder; } > "$D/cinder.conf"
cinder-manage --config-file "$D/cinder.conf" db sync > "$D/manage.log" 2>&1
nohup cinder-api --config-file "$D/cinder.conf" > "$D/stdout.log" 2>&1 &
echo $! > "$D/cinder-api.pid"
wait_for cinder-api "$D/cinder-api.log" http_up https://127.0.0.1:8776/

echo "neutron-server"
D=$RUN/neutron
{ cat <<CONF
[DEFAULT]
log_dir = $D
log_file = neutron-server.log
state_path = $D
bind_host = 127.0.0.1
bind_port = 9696
core_plugin = ml2
service_plugins = ovn-router
transport_url = fake://
auth_strategy = keystone
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
api_paste_config = /etc/neutron/api-paste.ini
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
use_ssl = true
[ssl]
cert_file = $T/server.crt
key_file = $T/server.key
[database]
connection = $DB/neutron
[oslo_concurrency]
lock_path = $D/lock
[oslo_messaging_notifications]
driver = noop
[ml2]
type_drivers = geneve,flat,vlan
tenant_network_types = geneve
mechanism_drivers = ovn
extension_drivers = port_security
overlay_ip_version = 4
[ml2_type_geneve]
vni_ranges = 1:65536
max_header_size = 38
[ml2_type_flat]
flat_networks = *
[ovn]
ovn_nb_connection = tcp:127.0.0.1:6641
ovn_sb_connection = tcp:127.0.0.1:6642
ovn_l3_scheduler = leastloaded
ovn_metadata_enabled = false
CONF
auth neutron; } > "$D/neutron.conf"
neutron-db-manage --config-file "$D/neutron.conf" upgrade heads > "$D/db-manage.log" 2>&1
nohup neutron-server --config-file "$D/neutron.conf" > "$D/stdout.log" 2>&1 &
echo $! > "$D/neutron-server.pid"
wait_for neutron-server "$D/neutron-server.log" http_up https://127.0.0.1:9696/

# shellcheck disable=SC2086 # word splitting of the host lists is intended
$PY "$H/fake-services.py" --compute $COMPUTE_HOSTS --cinder-volume $CINDER_BACKENDS

cat > "$RUN/clouds.yaml" <<YAML
clouds:
  admin:
    auth:
      auth_url: $KS
      username: admin
      password: secret
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
    cacert: $T/ca.crt
YAML
echo "local OpenStack ready: $KS (admin/secret, CA $T/ca.crt), clouds.yaml in $RUN"
