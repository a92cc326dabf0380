#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --json on every command, and the CLI's own documents against their schema
# (doc/dtplan.cli.schema.json, checked by tests/cli_schema.py): version, help,
# ledger, pipeline, comm, ckpt, segment, calibrate, check-config, observe,
# report and serve's lines;
# show --json is a dtplan.plan/1 and fabric
# export a dtplan.fabric/1.  Errors stay on stderr as dtplan plan --json's do;
# check-config --json also lists them.  Skipped (exit 77) when python3 has no
# jsonschema module (Debian: python3-jsonschema).
. "$(dirname "$0")/lib.sh"
schema="$top_srcdir/doc/dtplan.cli.schema.json"
check="$top_srcdir/tests/cli_schema.py"
data="$top_srcdir/tests/data"
if ! python3 -c 'import jsonschema' 2>/dev/null; then
	echo "skip: python3 has no jsonschema module (apt-get install python3-jsonschema)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err" "$out.state"' EXIT

# valid NAME FILE [SCHEMA_FILE CHECKER]: the file passes the check.
valid() {
	if python3 "${4:-$check}" "${3:-$schema}" "$2" >"$tmp/why" 2>&1; then
		_pass "$1"
	else
		sed 's/^/#   /' "$tmp/why" | head -20
		_fail "$1"
	fi
}
# doc STATUS SCHEMA ARGS...: dtplan ARGS exits STATUS with a SCHEMA document
# on stdout that passes the check.
i=0
doc() {
	want=$1 name=$2
	shift 2
	i=$((i + 1))
	run "$want" "$@" || return 0
	cp "$out" "$tmp/doc$i.json"
	json_eq 'j["schema"]' "$name"
	valid "dtplan $* is a valid $name" "$tmp/doc$i.json"
}

# every command listed takes --json
cmds=$("$DTPLAN" help --json | python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))')
for c in $cmds; do
	run 0 help "$c" --json || continue
	json_eq '"json" in [f["name"] for f in j["flags"]]' True
done

doc 0 dtplan.version/1 version --json
json_eq 'j["version"]' "$("$DTPLAN" version | sed 's/^dtplan //')"
doc 0 dtplan.version/1 --version --json
doc 0 dtplan.help/1 help --json
json_eq '[c["name"] for c in j["commands"]][:2]' "['plan', 'show']"
json_eq '"completion" in [c["name"] for c in j["commands"]]' False
for c in $cmds completion; do
	doc 0 dtplan.help/1 help "$c" --json
done
doc 0 dtplan.help/1 help plan --json
json_eq '[f for f in j["flags"] if f["name"] in ("model", "json")]' \
	"[{'name': 'model', 'value': True}, {'name': 'json', 'value': False}]"
run 2 help nosuch --json
stderr_has "unknown command 'nosuch'"

# the calculators
doc 0 dtplan.ledger/1 ledger --model llama2-7b --gpus 8 --zero 1 --json
json_eq 'j["dp"], j["zero"]' "(8, 1)"
doc 0 dtplan.ledger/1 ledger --model llama2-70b --gpus 64 --tp 8 --pp 2 --recompute full --json
doc 0 dtplan.pipeline/1 pipeline --stages 4 --microbatches 8 --json
doc 0 dtplan.pipeline/1 pipeline --stages 4 --microbatches 8 --chunks 2 --json
doc 0 dtplan.comm/1 comm --op allreduce --bytes 14GB --ranks 64 --bandwidth 50GB/s --json
doc 0 dtplan.comm/1 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 400Gb/s --algo tree --latency 5us --json
doc 0 dtplan.ckpt/1 ckpt --gpus 1024 --mtbf-gpu-hours 50000 --write-seconds 30 --json
doc 0 dtplan.segment/1 segment --model mixtral-8x7b --gpus 48 --gpus-per-node 8 \
	--train seq=4096,tp=2,pp=1,ep=8 --topology "$data/topology-blocks.conf" --json
json_eq 'j["segment"]' 2
doc 0 dtplan.segment/1 segment --model llama3-8b --gpus 32 --json
json_eq 'j["segment"], j["block_nodes"]' "(None, None)"
json_eq '"interval_steps" in j' False
doc 0 dtplan.ckpt/1 ckpt --gpus 1024 --mtbf-gpu-hours 50000 --write-seconds 30 --step-seconds 5 --json
json_eq 'j["step_seconds"]' 5
doc 0 dtplan.calibration/1 calibrate --show --records "$tmp/none.db" --json
json_eq 'j["records_read"], j["corrections"]' "(0, [])"

# check-config: valid, on a tree, on blocks, with nothing; invalid
doc 0 dtplan.check-config/1 check-config --site "$data/dtplan-two-racks.conf" \
	--topology "$data/topology-two-racks.conf" --json
json_eq 'j["valid"], j["errors"], j["topology"]["kind"], j["topology"]["leaves"]' "(True, [], 'tree', 2)"
json_eq '[(s["name"], s["above_threshold"]) for s in j["topology"]["switch_list"]]' \
	"[('leaf1', True), ('leaf2', True), ('spine', False)]"
json_eq '[s["value"] for s in j["settings"] if s["key"] == "OversubscriptionThreshold"]' "['2:1']"
doc 0 dtplan.check-config/1 check-config --topology "$data/topology-blocks.conf" --json
json_eq 'j["topology"]["kind"], j["topology"]["block_size"], j["site"]' "('block', 4, None)"
doc 0 dtplan.check-config/1 check-config --args "net_bandwidth=25GB/s" --json
json_eq 'j["topology"]' None
json_eq '[(s["argument"], s["default"]) for s in j["settings"] if s["argument"] == "net_bandwidth"]' \
	"[('net_bandwidth', False)]"
doc 1 dtplan.check-config/1 check-config --site "$data/dtplan-bad-key.conf" \
	--topology "$data/topology-bad-cycle.conf" --json
json_eq '[(e["source"].split("/")[-1], e["line"]) for e in j["errors"]]' \
	"[('dtplan-bad-key.conf', 3), ('topology-bad-cycle.conf', 3)]"
json_eq '"topology" in j or "settings" in j' False
stderr_has "dtplan-bad-key.conf:3: unknown key 'NetworkBandwith'"
run 2 check-config --json --site a --args "site=b"
stdout_lacks "schema"

# show --json: the plan as saved, a dtplan.plan/1
run 0 plan --model llama2-7b --gpus 8 --json && cp "$out" "$tmp/plan.json"
run 0 show "$tmp/plan.json" --json
if cmp -s "$out" "$tmp/plan.json"; then _pass "show --json prints the plan as saved"; else _fail "show --json differs from the plan"; fi
cp "$out" "$tmp/show.json"
valid "dtplan show --json is a dtplan.plan/1" "$tmp/show.json" \
	"$top_srcdir/doc/dtplan.plan.schema.json" "$top_srcdir/tests/plan_schema.py"
printf '{"schema": "dtplan.plan/1"}\n' >"$tmp/partial.json"
run 2 show "$tmp/partial.json" --json
stdout_lacks "schema"

# fabric export --json: the same dtplan.fabric/1 as without
run 0 fabric export --topology "$data/topology-two-racks.conf" && cp "$out" "$tmp/fabric.json"
run 0 fabric export --topology "$data/topology-two-racks.conf" --json
if cmp -s "$out" "$tmp/fabric.json"; then _pass "fabric export --json is its plain output"; else _fail "fabric export --json differs"; fi
json_eq 'j["schema"]' dtplan.fabric/1

# observe --json: the record kept
python3 - "$tmp/slurm.out" <<'EOF_PY'
import sys
with open(sys.argv[1], "w") as f:
    for it in range(1, 21):
        f.write(" iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): %.1f | global batch size:  1024 | lm loss: 7.000000E+00 |\n"
                % (it, 100, it * 1024, 9000.0 if it == 1 else 3000.0))
EOF_PY
doc 0 dtplan.observed/1 observe --plan "$tmp/plan.json" --output "$tmp/slurm.out" --job-id 42 \
	--time 1764583200 --records "$tmp/r.db" --cluster c1 --json
json_eq 'j["record"]["job_id"], j["record"]["cluster"], j["record"]["measured_step_s"], j["source"]' \
	"(42, 'c1', 3, 'megatron')"
json_eq 'j["records"]' "$tmp/r.db"
run 0 history --records "$tmp/r.db" --json
json_eq 'len(j), j[0]["job_id"]' "(1, 42)"
doc 0 dtplan.calibration/1 calibrate --show --records "$tmp/r.db" --cluster c1 --json
json_eq 'j["records_read"]' 1

# report --json: what a collector took
python3 - "$tmp/port" "$tmp/posted" <<'EOF_PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        open(sys.argv[2], "wb").write(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
s.timeout = 20
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.handle_request()
EOF_PY
srv=$!
n=0
while [ ! -s "$tmp/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
doc 0 dtplan.reported/1 report --url "http://127.0.0.1:$(cat "$tmp/port")/collect" \
	--plan "$tmp/plan.json" --job-id 7 --timeout 10s --json
json_eq 'j["job_id"], j["reported"]' "(7, True)"
wait $srv
if [ -s "$tmp/posted" ]; then _pass "the collector got the report"; else _fail "nothing posted"; fi
run 1 report --url "http://127.0.0.1:1/collect" --plan "$tmp/plan.json" --timeout 2s --json
stdout_lacks "schema"
stderr_has "not reported"

# serve --json: a line when it listens and when it stops (stdout), its log
# on stderr: a post without a credential refused
"$DTPLAN" serve --json --listen 127.0.0.1:0 --db "$tmp/serve.db" >"$tmp/serve.out" 2>"$tmp/serve.err" &
spid=$!
n=0
while ! grep -q listening "$tmp/serve.out" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
head -1 "$tmp/serve.out" >"$tmp/listening.json"
valid "dtplan serve --json says where it listens as a valid dtplan.serve/1" "$tmp/listening.json"
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$tmp/listening.json")
cp "$tmp/listening.json" "$out"
json_eq 'j["event"], j["listen"], j["store"], j["fabric"]' "('listening', '127.0.0.1:0', '$tmp/serve.db', None)"
python3 -c '
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/" % sys.argv[1], data=b"{}"), timeout=5)
except urllib.error.HTTPError:
    pass' "$port"
kill "$spid"; wait "$spid"
grep '"event":"refused"' "$tmp/serve.err" | head -1 >"$tmp/refused.json"
valid "dtplan serve --json logs a refusal as a valid dtplan.serve/1" "$tmp/refused.json"
cp "$tmp/refused.json" "$out"
json_eq 'j["address"], j["uid"], j["reason"]' "('127.0.0.1', None, 'unauthenticated')"
tail -1 "$tmp/serve.out" >"$tmp/stopping.json"
valid "dtplan serve --json says it stops as a valid dtplan.serve/1" "$tmp/stopping.json"
n=$(grep -vc '^{"schema":"dtplan.serve/1",' "$tmp/serve.out" "$tmp/serve.err" | awk -F: '{s += $2} END {print s}')
[ "$n" = 0 ] && _pass "dtplan serve --json writes JSON lines only" || _fail "dtplan serve --json wrote $n other lines"

# the check can fail
printf '{"schema": "dtplan.version/1", "version": 1}\n' >"$tmp/bad1.json"
printf '{"schema": "dtplan.check-config/1", "valid": false, "errors": []}\n' >"$tmp/bad2.json"
printf '{"schema": "dtplan.nosuch/1"}\n' >"$tmp/bad3.json"
for f in bad1 bad2 bad3; do
	if python3 "$check" "$schema" "$tmp/$f.json" >"$tmp/why" 2>&1; then
		_fail "$f.json passes the check"
	else
		_pass "$f.json fails: $(head -1 "$tmp/why" | sed 's/.*json: //')"
	fi
done
finish
