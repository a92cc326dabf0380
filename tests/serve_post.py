#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Posts a file to a dtplan collector with a MUNGE credential made by the
munge(1) command, the way probes/auth.c binds a body: the payload is
"dtplan.report-body/1 sha256=" and the body's SHA-256 in hex.

usage: serve_post.py URL BODY_FILE [--socket S] [--cred auto|none|FILE]
                     [--for-body FILE] [--save-cred FILE] [--as-user NAME]
                     [--source ADDR] [--append-cred TEXT]
Prints the HTTP status on the first line and the answer's body after it.
--for-body makes the credential for another file's body (a forged binding),
--save-cred keeps the credential used (to replay it), --as-user makes it as
that user (setpriv; the test runs as root), --source posts from that local
address (127.0.0.x), --append-cred appends TEXT to the credential."""
import argparse
import hashlib
import http.client
import urllib.parse
import pwd
import subprocess
import sys
import urllib.error
import urllib.request

PREFIX = "dtplan.report-body/1 sha256="
# The collector's own deadline (SERVE_REQUEST_S, serve/serve.h): under
# AddressSanitizer on a loaded 2-core machine, taking a report of 100,000
# nodes has taken over 10 s.
TIMEOUT = 60


def credential(body, socket, user):
    cmd = ["munge", "-s", PREFIX + hashlib.sha256(body).hexdigest(), "-t", "120"]
    if socket:
        cmd += ["-S", socket]
    if user:
        pw = pwd.getpwnam(user)
        cmd = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
               "--clear-groups"] + cmd
    return subprocess.run(cmd, check=True, capture_output=True).stdout.decode().strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("body")
    ap.add_argument("--socket")
    ap.add_argument("--cred", default="auto")
    ap.add_argument("--for-body")
    ap.add_argument("--save-cred")
    ap.add_argument("--as-user")
    ap.add_argument("--source")
    ap.add_argument("--append-cred", default="")
    a = ap.parse_args()
    body = open(a.body, "rb").read()
    cred = None
    if a.cred == "auto":
        signed = open(a.for_body, "rb").read() if a.for_body else body
        cred = credential(signed, a.socket, a.as_user)
    elif a.cred != "none":
        cred = open(a.cred).read().strip()
    if cred:
        cred += a.append_cred
    if a.save_cred and cred:
        with open(a.save_cred, "w") as f:
            f.write(cred)
    if a.source:
        u = urllib.parse.urlsplit(a.url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT,
                                       source_address=(a.source, 0))
        headers = {"Content-Type": "application/json"}
        if cred:
            headers["X-Dtplan-Munge"] = cred
        c.request("POST", u.path or "/", body=body, headers=headers)
        r = c.getresponse()
        print(r.status)
        print(r.read().decode())
        return 0
    req = urllib.request.Request(a.url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    if cred:
        req.add_header("X-Dtplan-Munge", cred)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    print(status)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
