#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hold_ports.py LO-HI SECONDS: a user's process that takes the probe's ports.

For tests/cluster/measure.bats (issue 26).  Run as an unprivileged user in a
node's network namespace before a job: it listens on every port of LO-HI it
can (every address, as the probe does), prints "held N of M (reason: count,
...)" once ready, then accepts every connection for SECONDS (or until
SIGTERM) and records what arrives without ever sending anything.  At the end
it prints "connections C bytes B credentials K": K counts the connections
that carried bytes of a MUNGE credential ("MUNGE:").
"""
import os
import select
import signal
import socket
import sys
import time


def main():
    print("pid %d" % os.getpid(), flush=True)
    lo, hi = (int(p) for p in sys.argv[1].split("-"))
    until = time.monotonic() + float(sys.argv[2])
    listeners, reasons = [], {}
    for port in range(lo, hi + 1):
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind(("::", port))
            s.listen(64)
            s.setblocking(False)
            listeners.append(s)
        except OSError as e:
            reasons[e.strerror] = reasons.get(e.strerror, 0) + 1
            s.close()
    why = ", ".join("%s: %d" % kv for kv in sorted(reasons.items()))
    print("held %d of %d%s" % (len(listeners), hi - lo + 1, " (%s)" % why if why else ""),
          flush=True)
    conns, seen = {}, {"connections": 0, "bytes": 0, "credentials": 0}

    def finish(*_):
        for data in conns.values():
            seen["credentials"] += b"MUNGE:" in data
        print("connections %(connections)d bytes %(bytes)d credentials %(credentials)d" % seen,
              flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, finish)
    while time.monotonic() < until:
        ready, _, _ = select.select(listeners + list(conns), [], [], 0.05)
        for s in ready:
            if s in conns:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if data:
                    seen["bytes"] += len(data)
                    conns[s] += data
                    continue
                seen["credentials"] += b"MUNGE:" in conns.pop(s)
                s.close()
            else:
                try:
                    c, _ = s.accept()
                except OSError:
                    continue
                c.setblocking(False)
                conns[c] = b""
                seen["connections"] += 1
    finish()


if __name__ == "__main__":
    main()
