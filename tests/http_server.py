#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A fabric service and a plan collector on loopback, for the HTTP tests.

Usage: http_server.py DIR [ADDRESS]

Listens on ADDRESS (default 127.0.0.1; the cluster tests give the test
cluster's own address) at a port of the kernel's choosing and writes it to
DIR/port (and the number of a port where nothing listens to DIR/closed_port)
once it accepts connections.  Every request is appended to DIR/requests.log
as "METHOD PATH".  What it answers:

  GET  /files/NAME           DIR/NAME, 200 (404 when missing), with the Content-Type of
                             its extension (.json application/json, .conf and .txt
                             text/plain, .html text/html, else application/octet-stream);
                             ?type=T sends T instead, ?type= none
  GET  /svc                  a service whose behaviour DIR/svc.mode says, read at each
                             request: ok (DIR/fabric.json), slow (after 5 s), 500,
                             malformed (half of a JSON document, as application/json),
                             big (1 MB, no
                             Content-Length), loop (302 to itself)
  GET  /slow/NAME?delay=S    the same after S seconds
  GET  /status/CODE          that status with a short body
  GET  /big?bytes=N          N bytes of '#', with Content-Length
  GET  /big-stream?bytes=N   N bytes of '#', no Content-Length (ends at close)
  GET  /redirect/NAME        302 to /files/NAME
  GET  /loop                 302 to /loop
  GET  /to-ftp               302 to ftp://127.0.0.1/x
  POST /collect              appends the body as one line to DIR/reports.jsonl and the
                             Authorization header (or "-") to DIR/auth.log; 201
  POST /collect/slow?delay=S 201 after S seconds, body not kept (its client gave up)
  POST /collect/status/CODE  that status, body not kept
  POST /collect/redirect     307 to /collect
  POST /collect/big?bytes=N  stores the body, answers 200 with N bytes (with a length;
                             /collect/big-stream without one)

It runs until killed.
"""
import http.server
import os
import socket
import sys
import threading
import time
import urllib.parse

ROOT = sys.argv[1]
TYPES = {".json": "application/json", ".conf": "text/plain", ".txt": "text/plain",
         ".html": "text/html"}
ADDRESS = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
LOCK = threading.Lock()


def append(name, line):
    with LOCK, open(os.path.join(ROOT, name), "a", encoding="utf-8") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, body=b"", headers=None, length=True):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def query(self):
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query, keep_blank_values=True)

    def do_GET(self):
        append("requests.log", "GET " + self.path)
        path = urllib.parse.urlsplit(self.path).path
        q = self.query()
        if path == "/svc":
            try:
                with open(os.path.join(ROOT, "svc.mode"), encoding="ascii") as f:
                    mode = f.read().strip()
            except OSError:
                mode = "ok"
            if mode == "slow":
                time.sleep(5)
            if mode in ("ok", "slow"):
                path = "/files/fabric.json"
            elif mode == "500":
                self.answer(500, b"something broke\n")
                return
            elif mode == "malformed":
                self.answer(200, b'{"schema": "dtplan.fabric/1",\n "switches": [{"name": ',
                            {"Content-Type": "application/json"})
                return
            elif mode == "big":
                self.answer(200, b" " * 1000000, length=False)
                return
            else:
                self.answer(302, b"", {"Location": "/svc"})
                return
        if path.startswith("/slow/"):
            time.sleep(float(q.get("delay", ["5"])[0]))
            path = "/files/" + path[len("/slow/"):]
        if path.startswith("/files/"):
            name = os.path.basename(path)
            try:
                with open(os.path.join(ROOT, name), "rb") as f:
                    body = f.read()
            except OSError:
                self.answer(404, b"no such file\n")
                return
            ctype = TYPES.get(os.path.splitext(name)[1], "application/octet-stream")
            ctype = q.get("type", [ctype])[0] if "type" in q else ctype
            self.answer(200, body, {"Content-Type": ctype} if ctype else {})
        elif path.startswith("/status/"):
            self.answer(int(path.split("/")[2]), b"something broke\n")
        elif path in ("/big", "/big-stream"):
            n = int(q.get("bytes", ["1000000"])[0])
            self.answer(200, b"#" * n, length=path == "/big")
        elif path.startswith("/redirect/"):
            self.answer(302, b"", {"Location": "/files/" + path[len("/redirect/"):]})
        elif path == "/loop":
            self.answer(302, b"", {"Location": "/loop"})
        elif path == "/to-ftp":
            self.answer(302, b"", {"Location": "ftp://127.0.0.1/x"})
        else:
            self.answer(404, b"unknown path\n")

    def do_POST(self):
        append("requests.log", "POST " + self.path)
        path = urllib.parse.urlsplit(self.path).path
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if path == "/collect/slow":
            # answers late and stores nothing: the client has given up by
            # then, and a line appended seconds later would land among the
            # next test's reports
            time.sleep(float(self.query().get("delay", ["5"])[0]))
            self.answer(201, b"too late\n")
            return
        if path in ("/collect/big", "/collect/big-stream"):
            append("reports.jsonl", body.decode("utf-8"))
            n = int(self.query().get("bytes", ["1048576"])[0])
            self.answer(200, b"#" * n, length=path == "/collect/big")
        elif path == "/collect":
            append("reports.jsonl", body.decode("utf-8"))
            append("auth.log", self.headers.get("Authorization", "-"))
            self.answer(201, b"stored\n")
        elif path.startswith("/collect/status/"):
            self.answer(int(path.split("/")[3]), b"collector broke\n")
        elif path == "/collect/redirect":
            self.answer(307, b"", {"Location": "/collect"})
        else:
            self.answer(404, b"unknown path\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    server = Server((ADDRESS, 0), Handler)
    closed = socket.socket()
    closed.bind((ADDRESS, 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    for name, value in (("closed_port", closed_port), ("port", server.server_address[1])):
        tmp = os.path.join(ROOT, name + ".tmp")
        with open(tmp, "w", encoding="ascii") as f:
            f.write("%d\n" % value)
        os.rename(tmp, os.path.join(ROOT, name))
    server.serve_forever()


if __name__ == "__main__":
    main()
