#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile clients against a dtplan collector on loopback (issue 32), bounded
in count and time.

usage: serve_hostile.py PORT READY_FILE SECONDS DEADLINE

For SECONDS seconds: from each of 127.0.0.2 .. 127.0.0.9, 80 connections
(more than the collector takes from one address) that send a request a
byte every half second (slow); from 127.0.0.10, a header that never ends,
a byte every half second; from 127.0.0.11, bodies larger than the collector
takes, declared and chunked (large).  READY_FILE is written once they are
connected.  Then prints one line per check, "ok - ..." or "not ok - ...":
the trickling connections were closed within DEADLINE (+1.5) seconds of
opening, and each address held at most SERVE_PER_ADDRESS (16) at once."""
import socket
import sys
import threading
import time

port, ready, seconds, deadline = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
lock = threading.Lock()
lives = []          # seconds each trickling connection lived
held = {}           # address: connections accepted (that got a byte through)
large = []          # statuses of the large posts
stop = time.monotonic() + seconds


def trickle(addr, text):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(addr, 0))
    except OSError:
        return
    t0 = time.monotonic()
    s.settimeout(0.5)
    sent = 0
    try:
        while time.monotonic() < stop:
            s.send(text[sent % len(text):sent % len(text) + 1])
            sent += 1
            try:
                if s.recv(4096) == b"":
                    break
            except socket.timeout:
                pass
    except OSError:
        pass
    life = time.monotonic() - t0
    s.close()
    with lock:
        if sent > 1:
            lives.append(life)
            held[addr] = held.get(addr, 0) + 1


def big(chunked):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.11", 0))
        if chunked:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"x" * 65536
            for _ in range(80):
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            s.sendall(b"0\r\n\r\n")
        else:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n")
        status = s.recv(64).split(b" ")[1].decode()
    except (OSError, IndexError):
        status = "closed"
    with lock:
        large.append(status)


body = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"{" * 100000
threads = []
for i in range(2, 10):
    for _ in range(80):
        threads.append(threading.Thread(target=trickle, args=("127.0.0.%d" % i, body)))
for _ in range(4):
    threads.append(threading.Thread(target=trickle, args=("127.0.0.10", b"GET / HTTP/1.1\r\nX-A: " + b"a" * 100000)))
threads.append(threading.Thread(target=big, args=(False,)))
threads.append(threading.Thread(target=big, args=(True,)))
for t in threads:
    t.start()
time.sleep(1.0)
open(ready, "w").write("ready\n")
for t in threads:
    t.join(seconds + 10)
worst = max(lives) if lives else 0
print("%s - trickling connections closed after at most %.1f s (deadline %g s, %d of them)" %
      ("ok" if lives and worst <= deadline + 1.5 else "not ok", worst, deadline, len(lives)))
print("%s - large bodies refused: %s" % ("ok" if large and all(x in ("413", "closed") for x in large) else "not ok", large))
