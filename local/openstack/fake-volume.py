#!/usr/bin/python3
"""Adds or removes a fake Cinder volume of a volume type in the local
OpenStack's database (127.0.0.1:3306), for tests of what must not happen to
a volume type that volumes use: Cinder refuses to delete a type any volume
row names. Nothing is stored.

usage: fake-volume.py add TYPE_ID PROJECT NAME   (prints the volume's UUID)
       fake-volume.py remove UUID"""
import datetime
import sys
import uuid

import pymysql

db = pymysql.connect(host="127.0.0.1", port=3306, user="root", database="cinder")
if sys.argv[1] == "add":
    type_id, project, name = sys.argv[2:5]
    u, now = str(uuid.uuid4()), datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")
    db.cursor().execute(
        "insert into volumes (created_at, updated_at, deleted, id, project_id, user_id, size, status, attach_status,"
        " display_name, volume_type_id) values (%s,%s,0,%s,%s,'fake-user',1,'available','detached',%s,%s)",
        (now, now, u, project, name, type_id))
    print(u)
elif sys.argv[1] == "remove":
    db.cursor().execute("delete from volumes where id=%s", (sys.argv[2],))
else:
    sys.exit(__doc__)
db.commit()
