#!/usr/bin/python3
"""Adds or removes a fake Nova instance on a fake compute host of the local
OpenStack (its cell and API databases on 127.0.0.1:3306), for tests of what
must not happen to a host that runs instances. Nova lists it (GET /servers
with the host and tenant_id filters); nothing runs.

usage: fake-instance.py add HOST PROJECT NAME   (prints the instance's UUID)
       fake-instance.py remove UUID"""
import datetime
import sys
import uuid

import pymysql


def db(name):
    return pymysql.connect(host="127.0.0.1", port=3306, user="root", database=name)


cell, api = db("nova_cell1"), db("nova_api")
if sys.argv[1] == "add":
    host, project, name = sys.argv[2:5]
    u, now = str(uuid.uuid4()), datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")
    cell.cursor().execute(
        "insert into instances (created_at, updated_at, uuid, project_id, user_id, host, node, display_name, hostname,"
        " vm_state, power_state, deleted, launched_at, memory_mb, vcpus, root_gb, ephemeral_gb)"
        " values (%s,%s,%s,%s,'fake-user',%s,%s,%s,%s,'active',1,0,%s,512,1,1,0)",
        (now, now, u, project, host, host, name, name, now))
    c = api.cursor()
    c.execute("select id from cell_mappings where name='cell1'")
    cell_id = c.fetchone()[0]
    c.execute("insert into instance_mappings (created_at, instance_uuid, cell_id, project_id, user_id, queued_for_delete)"
              " values (%s,%s,%s,%s,'fake-user',0)", (now, u, cell_id, project))
    print(u)
elif sys.argv[1] == "remove":
    u = sys.argv[2]
    cell.cursor().execute("delete from instances where uuid=%s", (u,))
    api.cursor().execute("delete from instance_mappings where instance_uuid=%s", (u,))
else:
    sys.exit(__doc__)
cell.commit()
api.commit()
