#!/usr/bin/python3
"""Registers fake nova-compute hosts and cinder-volume backends in the local
OpenStack's databases (MariaDB on 127.0.0.1:3306), so Nova aggregates can hold hosts and Cinder lists
backends, without hypervisors or storage. Run by start.sh.

usage: fake-services.py --compute HOST... --cinder-volume BACKEND...
       fake-services.py --delete-compute HOST...

--delete-compute removes fake compute hosts as Nova's DELETE /os-services does
(the service, its compute node and host mapping, and the host from every
aggregate); Nova's own API answers 500 for a host without a resource provider
in Placement, which a fake host is."""
import argparse
import datetime
import uuid

import pymysql

p = argparse.ArgumentParser()
p.add_argument("--compute", nargs="*", default=[])
p.add_argument("--cinder-volume", nargs="*", default=[])
p.add_argument("--delete-compute", nargs="*", default=[])
a = p.parse_args()
now = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")


def db(name):
    return pymysql.connect(host="127.0.0.1", port=3306, user="root", database=name)


cell, api = db("nova_cell1"), db("nova_api")
c, a_ = cell.cursor(), api.cursor()
a_.execute("select id from cell_mappings where name='cell1'")
cell_id = a_.fetchone()[0]
for h in a.compute:
    # A host registered before stays as it is: run again, the script adds
    # only what is missing.
    c.execute("select id from services where host=%s and `binary`='nova-compute' and deleted=0", (h,))
    if c.fetchone():
        continue
    c.execute("insert into services (created_at, updated_at, host, `binary`, topic, report_count, disabled,"
                 " deleted, forced_down, version, uuid, last_seen_up) values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                 (now, now, h, "nova-compute", "compute", 1, 0, 0, 0, 61, str(uuid.uuid4()), now))
    sid = c.lastrowid
    c.execute("insert into compute_nodes (created_at, updated_at, service_id, vcpus, memory_mb, local_gb,"
                 " vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info,"
                 " running_vms, hypervisor_hostname, deleted, host_ip, host, uuid, mapped, free_ram_mb, free_disk_gb,"
                 " ram_allocation_ratio, cpu_allocation_ratio, disk_allocation_ratio, stats, supported_instances)"
                 " values (%s,%s,%s,%s,%s,%s,0,0,0,'fake',1000,'{}',0,%s,0,'127.0.0.1',%s,%s,1,%s,%s,1.0,16.0,1.0,'{}','[]')",
                 (now, now, sid, 16, 65536, 1000, h, h, str(uuid.uuid4()), 65536, 1000))
    a_.execute("insert into host_mappings (created_at, cell_id, host) values (%s,%s,%s)", (now, cell_id, h))
for h in a.delete_compute:
    c.execute("update compute_nodes set deleted=id, deleted_at=%s where host=%s and deleted=0", (now, h))
    c.execute("update services set deleted=id, deleted_at=%s where host=%s and `binary`='nova-compute' and deleted=0", (now, h))
    a_.execute("delete from host_mappings where host=%s", (h,))
    a_.execute("delete from aggregate_hosts where host=%s", (h,))
cell.commit()
api.commit()

cinder = db("cinder")
for b in a.cinder_volume:
    cinder.cursor().execute("insert into services (created_at, updated_at, deleted, host, `binary`, topic, report_count,"
                   " disabled, availability_zone, uuid, frozen, active_backend_id, replication_status)"
                   " values (%s,%s,0,%s,'cinder-volume','cinder-volume',1,0,'nova',%s,0,NULL,'not-capable')",
                   (now, now, f"localhost@{b}", str(uuid.uuid4())))
cinder.commit()
print("fake nova-compute hosts:", a.compute, "removed:", a.delete_compute, "fake cinder-volume backends:", a.cinder_volume)
