#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/bench_serve.py: the collector (dtplan serve) under the load of a
site: 1,000 reports a minute from 8 posting clients (threads, one
connection each), every report a real plan report with its own MUNGE
credential (libmunge through ctypes, a munged of the bench's own), for
BENCH_SERVE_SECONDS (default 60; the target is stated for 600).

Reports: how many were posted and how many the store holds (none lost),
the answer's p50/p99/max (the HTTP post only, the credential made before
it), and the collector's RSS sampled every 5 s (flat: the last sample within
BENCH_SERVE_RSS_SLACK, default 20%, of the one after the first minute, or
of the first sample in a shorter run).  Targets: no report lost, p99 under
50 ms, memory flat.  Exits 1 when one is missed, 77 without munged.

Usage: bench/bench_serve.py [SECONDS]      (from the build tree; not in make check)
"""
import ctypes
import hashlib
import http.client
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

CLIENTS = 8
PER_MINUTE = 1000
PREFIX = b"dtplan.report-body/1 sha256="
MUNGE_OPT_SOCKET = 8
MUNGE_OPT_TTL = 4

here = os.path.dirname(os.path.abspath(__file__))
top_src = os.environ.get("top_srcdir", os.path.dirname(here))
top_build = os.environ.get("top_builddir", top_src)
dtplan = os.path.join(top_build, "cli", "dtplan")


def say(*a):
    print("bench_serve:", *a, file=sys.stderr, flush=True)


def start_munged(tmp):
    munged = shutil.which("munged") or "/usr/sbin/munged"
    if not os.access(munged, os.X_OK):
        say("SKIP: no munged")
        sys.exit(77)
    key = os.path.join(tmp, "key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = os.path.join(tmp, "munge.sock")
    p = subprocess.Popen([munged, "--foreground", "--socket=" + sock, "--key-file=" + key,
                          "--pid-file=" + tmp + "/munged.pid", "--log-file=" + tmp + "/munged.log",
                          "--seed-file=" + tmp + "/munged.seed", "--num-threads=4"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(sock):
            return p, sock
        time.sleep(0.05)
    say("SKIP: munged does not start")
    sys.exit(77)


class Munge:
    def __init__(self, sock):
        self.lib = ctypes.CDLL("libmunge.so.2")
        self.lib.munge_ctx_create.restype = ctypes.c_void_p
        self.lib.munge_encode.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p,
                                          ctypes.c_char_p, ctypes.c_int]
        self.ctx = self.lib.munge_ctx_create()
        self.lib.munge_ctx_set(ctypes.c_void_p(self.ctx), MUNGE_OPT_SOCKET, sock.encode())
        self.lib.munge_ctx_set(ctypes.c_void_p(self.ctx), MUNGE_OPT_TTL, ctypes.c_int(120))

    def cred(self, body):
        payload = PREFIX + hashlib.sha256(body).hexdigest().encode()
        out = ctypes.c_char_p()
        rc = self.lib.munge_encode(ctypes.byref(out), self.ctx, payload, len(payload))
        if rc != 0:
            raise RuntimeError("munge_encode: %d" % rc)
        return out.value.decode()  # leaks the C string: a few MB over a run


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else int(
        os.environ.get("BENCH_SERVE_SECONDS", "60"))
    slack = float(os.environ.get("BENCH_SERVE_RSS_SLACK", "0.2"))
    plan = json.load(open(os.path.join(top_src, "tests/cli/golden/plan_8b_4_nodes.json")))
    tmp = tempfile.mkdtemp(prefix="dtplan-bench-serve.")
    os.chmod(tmp, 0o755)
    munged, sock = start_munged(tmp)
    db = os.path.join(tmp, "reports.db")
    log = open(os.path.join(tmp, "serve.log"), "w+")
    # per address the bench posts 1000/min: --rate stays above it
    srv = subprocess.Popen([dtplan, "serve", "--listen", "127.0.0.1:0", "--db", db,
                            "--munge-socket", sock, "--rate", "100"], stderr=log)
    port = None
    for _ in range(200):
        log.seek(0)
        text = log.read()
        if "listening on port" in text:
            port = int(text.split("listening on port ")[1].split()[0])
            break
        time.sleep(0.05)
    if port is None:
        say("dtplan serve did not start:", text)
        return 1
    interval = 60.0 * CLIENTS / PER_MINUTE  # each client's period
    lat, failed, posted = [], [], [0]
    lock = threading.Lock()
    t_end = time.monotonic() + seconds

    def client(k):
        m = Munge(sock)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        n = 0
        next_t = time.monotonic() + k * interval / CLIENTS
        while True:
            now = time.monotonic()
            if now >= t_end:
                break
            if next_t > now:
                time.sleep(next_t - now)
            next_t += interval
            job = 1 + k * 10000000 + n
            n += 1
            body = json.dumps({"schema": "dtplan.report/1", "dtplan_version": "bench",
                               "sender": "bench", "time": None, "cluster": "bench",
                               "job_id": job, "user": "root", "uid": 0, "nodes": "gpu[01-04]",
                               "host": "bench", "state": "ok", "reason": None,
                               "warnings": [], "plan": plan}).encode()
            cred = m.cred(body)
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/", body, {"Content-Type": "application/json",
                                                 "X-Dtplan-Munge": cred})
                r = conn.getresponse()
                r.read()
                ok = r.status == 200
            except Exception as e:  # a lost report: counted, the connection renewed
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            dt = time.perf_counter() - t0
            with lock:
                posted[0] += 1
                lat.append(dt)
                if not ok:
                    failed.append(job)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    samples = []
    t0 = time.monotonic()
    while any(t.is_alive() for t in threads):
        samples.append((time.monotonic() - t0, rss_kb(srv.pid)))
        time.sleep(5)
    for t in threads:
        t.join()
    kept = sqlite3.connect(db).execute("SELECT COUNT(*) FROM reports").fetchone()[0]
    srv.send_signal(signal.SIGTERM)
    srv.wait()
    munged.terminate()
    munged.wait()
    shutil.rmtree(tmp)
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    base = next((r for t, r in samples if t >= 60), samples[0][1]) if samples else 0
    last = samples[-1][1] if samples else 0
    print("reports posted %d in %d s (%.0f a minute) from %d clients; refused or lost %d;"
          " the store holds %d" % (posted[0], seconds, posted[0] * 60.0 / seconds, CLIENTS,
                                   len(failed), kept))
    print("answer p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (p(0.5), p(0.99), lat[-1] * 1000))
    print("collector RSS: %s KiB (every 5 s); reference %d KiB, last %d KiB" % (
        " ".join(str(r) for _, r in samples), base, last))
    ok = not failed and kept == posted[0] and p(0.99) < 50 and last <= base * (1 + slack)
    print("targets (none lost, p99 < 50 ms, RSS flat within %d%%): %s" % (
        slack * 100, "met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
