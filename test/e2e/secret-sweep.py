#!/usr/bin/python3
"""Searches the management cluster's objects for the values of its Secrets.

Usage: secret-sweep.py SECRETS.json OBJECTS.json

SECRETS.json is `kubectl get secrets -A -o json`; OBJECTS.json is every other
object (`kubectl get <every listable kind> -A -o json`), events included. The
values searched are the ones this landscape publishes: CephX keys (key
"key"), the application credential secrets and passwords in clouds.yaml, and
the tokens and client keys of kubeconfigs. Each is searched as it is and in
base64. Prints each hit (never the value) and exits 1 when there is one.
"""
import base64
import json
import sys

import yaml


def load(text):
    """A YAML document as a dict; {} for anything else."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return doc if isinstance(doc, dict) else {}


def values(secret):
    """The secret values of one Secret, with the key they come from."""
    out = []
    for key, b64 in (secret.get("data") or {}).items():
        try:
            text = base64.b64decode(b64).decode()
        except (ValueError, UnicodeDecodeError):
            continue
        if key == "key" and text.startswith("AQ"):
            out.append((key, text))
        elif key.endswith("clouds.yaml"):
            doc = load(text)
            for cloud in (doc.get("clouds") or {}).values():
                auth = cloud.get("auth") or {} if isinstance(cloud, dict) else {}
                for field in ("application_credential_secret", "password"):
                    if auth.get(field):
                        out.append((key + " " + field, auth[field]))
        elif key == "kubeconfig":
            doc = load(text)
            for user in doc.get("users") or []:
                u = (user.get("user") or {}) if isinstance(user, dict) else {}
                if u.get("token"):
                    out.append((key + " token", u["token"]))
                if u.get("client-key-data"):
                    out.append((key + " client-key-data", u["client-key-data"]))
    return [(k, v) for k, v in out if len(v) >= 16]


def main():
    with open(sys.argv[1]) as f:
        secrets = json.load(f)["items"]
    with open(sys.argv[2]) as f:
        objects = json.load(f)["items"]
    wanted = {}
    for s in secrets:
        m = s["metadata"]
        for key, v in values(s):
            where = "%s of Secret %s/%s" % (key, m["namespace"], m["name"])
            wanted.setdefault(v, where)
            wanted.setdefault(base64.b64encode(v.encode()).decode(), where + " (base64)")
    hits = 0
    for o in objects:
        text = json.dumps(o)
        m = o.get("metadata", {})
        name = "%s %s" % (o.get("kind"), (m.get("namespace", "") + "/" if m.get("namespace") else "") + m.get("name", ""))
        for v, where in wanted.items():
            if v in text:
                print("%s holds the %s" % (name, where))
                hits += 1
    print("searched %d objects for %d values of %d Secrets: %d found" % (len(objects), len(wanted), len(secrets), hits))
    sys.exit(1 if hits else 0)


main()
