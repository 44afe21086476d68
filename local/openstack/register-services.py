#!/usr/bin/python3
"""Registers the service users and catalog entries of the local OpenStack in
its Keystone (idempotent): every endpoint HTTPS, as the APIs serve. Run by
start.sh, which exports REQUESTS_CA_BUNDLE with the local CA."""
from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client

KS = "https://127.0.0.1:5000/v3"
SERVICES = {  # name: (type, url)
    "placement": ("placement", "https://127.0.0.1:8778"),
    "nova": ("compute", "https://127.0.0.1:8774/v2.1"),
    "cinderv3": ("block-storage", "https://127.0.0.1:8776/v3/%(project_id)s"),
    "neutron": ("network", "https://127.0.0.1:9696"),
}
USERS = ["placement", "nova", "cinder", "neutron"]

auth = v3.Password(auth_url=KS, username="admin", password="secret", project_name="admin",
                   user_domain_id="default", project_domain_id="default")
ks = client.Client(session=session.Session(auth=auth))


def one(items):
    return items[0] if items else None


service_project = one(ks.projects.list(name="service")) or ks.projects.create("service", "default")
admin = one(ks.roles.list(name="admin"))
for name in USERS:
    user = one(ks.users.list(name=name)) or ks.users.create(name, domain="default", password="secret")
    ks.roles.grant(admin, user=user, project=service_project)
for name, (stype, url) in SERVICES.items():
    svc = one(ks.services.list(name=name)) or ks.services.create(name, stype)
    if not ks.endpoints.list(service=svc):
        for iface in ("public", "internal", "admin"):
            ks.endpoints.create(svc, url, interface=iface, region="RegionOne")
    print("registered", name, stype, url)
