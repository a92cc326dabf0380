#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan serve, the collector, on loopback with a munged of the test's own:
# reports posted by dtplan report and by tests/serve_post.py (credentials
# from munge(1)), refusals by reason, the store (SQLite), /metrics, the page,
# /fabric and /calibration.  Skipped (77) without munged, munge(1) or python3.
. "$(dirname "$0")/lib.sh"
unset SLURM_JOB_ID SLURM_CLUSTER_NAME http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
MUNGED=$(command -v munged || ls /usr/sbin/munged 2>/dev/null)
[ -n "$MUNGED" ] && command -v munge >/dev/null 2>&1 || { echo "SKIP: no munged"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: no sqlite3"; exit 77; }
POST="python3 $top_srcdir/tests/serve_post.py"
plan_in="$top_srcdir/tests/cli/golden/plan_8b_4_nodes.json"
tmp=$(mktemp -d /tmp/dtplan-serve.XXXXXX)
chmod 755 "$tmp"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$tmp" "$out" "$err"
}
trap cleanup EXIT

# munged NAME: a munged with its own key in $tmp/NAME; its socket $tmp/NAME/sock.
munged() {
	mkdir -p "$tmp/$1" && chmod 755 "$tmp/$1"
	dd if=/dev/urandom of="$tmp/$1/key" bs=1024 count=1 2>/dev/null && chmod 400 "$tmp/$1/key"
	"$MUNGED" --foreground --socket="$tmp/$1/sock" --key-file="$tmp/$1/key" \
		--pid-file="$tmp/$1/pid" --log-file="$tmp/$1/log" --seed-file="$tmp/$1/seed" \
		>/dev/null 2>&1 &
	pids="$pids $!"
	i=0
	until munge -S "$tmp/$1/sock" -n >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "SKIP: munged does not start"; exit 77; }
		sleep 0.05
	done
}
munged a
munged b
sock=$tmp/a/sock

# serve NAME ARGS...: a collector with store $tmp/NAME.db; its URL in $url.
serve() {
	name=$1; shift
	"$DTPLAN" serve --listen 127.0.0.1:0 --db "$tmp/$name.db" --munge-socket "$sock" "$@" \
		2>"$tmp/$name.log" &
	pids="$pids $!"
	i=0
	until grep -qs 'listening on port' "$tmp/$name.log"; do
		i=$((i + 1))
		[ $i -lt 200 ] || { cat "$tmp/$name.log"; echo "Bail out! dtplan serve did not start"; exit 99; }
		sleep 0.05
	done
	url=http://127.0.0.1:$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/$name.log")
}

# post STATUS REASON ARGS...: serve_post.py ARGS answers STATUS, refusing with REASON ("-": accepted).
post() {
	want=$1 reason=$2; shift 2
	$POST "$@" >"$out" 2>"$err"
	got=$(head -1 "$out")
	if [ "$got" != "$want" ]; then _fail "post $* answered $got, expected $want"; return 1; fi
	if [ "$reason" = - ] && grep -q '"accepted"' "$out"; then _pass "post $* accepted"
	elif grep -qF "\"refused\":\"$reason\"" "$out"; then _pass "post $* refused: $reason"
	else _fail "post $* answered $got but not '$reason'"; fi
}

# metric LINE: /metrics has this exact line.
metric() {
	curl -s "$url/metrics" >"$out"
	if grep -qxF -- "$1" "$out"; then _pass "metrics: $1"; else _fail "metrics lack '$1'"; fi
}
# /metrics passes promtool's check (when promtool is here)
promtool_ok() {
	command -v promtool >/dev/null 2>&1 || { echo "# skipped: no promtool"; return 0; }
	curl -s "$url/metrics" >"$out"
	if promtool check metrics <"$out" >"$err" 2>&1; then _pass "promtool check metrics"
	else _fail "promtool check metrics: $(cat "$err")"; fi
}
page_has() { curl -s "$url/" >"$out"; stdout_has "$1"; }
page_lacks() { curl -s "$url/" >"$out"; stdout_lacks "$1"; }
# at_has PATH TEXT, at_lacks PATH TEXT: the page at PATH has (lacks) TEXT
at_has() { curl -s "$url$1" >"$out"; stdout_has "$2"; }
at_lacks() { curl -s "$url$1" >"$out"; stdout_lacks "$2"; }
# status_is PATH CODE: GET PATH answers CODE
status_is() {
	got=$(curl -s -o "$out" -w '%{http_code}' "$url$1")
	[ "$got" = "$2" ] && _pass "GET $1: $2" || _fail "GET $1 answered $got, not $2"
}

run 0 serve --help
stdout_starts "Usage: dtplan serve"
run 2 serve
stderr_has "--db is required"
run 2 serve --db "$tmp/x.db" --listen localhost
stderr_has "is not ADDR:PORT"
run 2 serve --db "$tmp/x.db" --bogus
run 1 serve --db /nonexistent/dir/x.db --listen 127.0.0.1:0
run 1 serve --db "$tmp/x.db" --listen 127.0.0.1:0 --fabric "$plan_in"
run 2 report --plan "$plan_in" --url http://127.0.0.1:1/ --munge-socket

serve main --fabric "$top_srcdir/tests/data/fabric-two-leaves.json"

# --- a plan from dtplan report, with its credential -----------------------
run 0 report --url "$url/" --plan "$plan_in" --munge-socket "$sock" --job-id 41
metric 'dtplan_reports_accepted_total{kind="plan"} 1'
metric 'dtplan_plans_total{state="ok"} 1'
n=$(sqlite3 "$tmp/main.db" "SELECT COUNT(*) FROM reports WHERE job_id = 41 AND user = '$(id -un)'")
[ "$n" = 1 ] && _pass "the store holds job 41" || _fail "the store holds $n rows of job 41"
[ "$(sqlite3 "$tmp/main.db" 'PRAGMA journal_mode')" = wal ] && _pass "the store is in WAL mode" ||
	_fail "the store is not in WAL mode"
[ "$(sqlite3 "$tmp/main.db" 'PRAGMA user_version')" = 4 ] && _pass "store schema version 4" ||
	_fail "store schema version is not 4"

# --- refusals, each counted under its reason ------------------------------
python3 - "$plan_in" "$tmp" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
def report(job, user, uid, cluster="c1", p=plan):
    return {"schema": "dtplan.report/1", "dtplan_version": "test", "sender": "test",
            "time": "2026-01-01T00:00:00Z", "cluster": cluster, "job_id": job, "user": user,
            "uid": uid, "nodes": "gpu[01-04]", "host": "h", "state": "ok", "reason": None,
            "warnings": [], "plan": p}
t = sys.argv[2]
json.dump(report(42, "root", 0), open(t + "/r42.json", "w"))
json.dump(report(43, "root", 0), open(t + "/r43.json", "w"))
json.dump(report(44, "nobody", None), open(t + "/nobody.json", "w"))
json.dump(report(45, "root", 0), open(t + "/root-named.json", "w"))
json.dump(report(46, "root", 0, cluster="<script>alert(1)</script>"), open(t + "/xss.json", "w"))
r = report(47, "root", 0); r["job_id"] = "47"
json.dump(r, open(t + "/badtype.json", "w"))
json.dump({"schema": "something/else"}, open(t + "/schema.json", "w"))
r = report(48, "root", 0); r["state"] = "refused"; r["reason"] = "policy=deny: <script>alert(2)</script>"
r["warnings"] = [{"code": "oversubscribed-uplink", "message": "m"}, {"code": "spread", "message": "m"}]
json.dump(r, open(t + "/refused.json", "w"))
# 40 codes no version of dtplan makes, one with markup: counted as "other"
r = report(49, "root", 0)
r["warnings"] = [{"code": "invented-%d" % i, "message": "m"} for i in range(39)]
r["warnings"].append({"code": '<b>"x"\\', "message": "m"})
json.dump(r, open(t + "/codes.json", "w"))
open(t + "/garbage.json", "w").write("{not json")
EOF
post 401 unauthenticated "$url/" "$tmp/r42.json" --cred none
post 403 forged "$url/" "$tmp/r42.json" --socket "$tmp/b/sock"
post 403 forged "$url/" "$tmp/r42.json" --socket "$sock" --for-body "$tmp/r43.json"
post 200 - "$url/" "$tmp/r42.json" --socket "$sock" --save-cred "$tmp/cred42"
post 409 replayed "$url/" "$tmp/r42.json" --cred "$tmp/cred42"
post 400 malformed "$url/" "$tmp/garbage.json" --socket "$sock"
post 400 malformed "$url/" "$tmp/badtype.json" --socket "$sock"
stdout_has '\"job_id\" must be an integer or null'
post 400 schema "$url/" "$tmp/schema.json" --socket "$sock"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	# a user's credential is good for that user's reports only
	post 200 - "$url/" "$tmp/nobody.json" --socket "$sock" --as-user nobody
	post 403 user "$url/" "$tmp/root-named.json" --socket "$sock" --as-user nobody
	metric 'dtplan_reports_refused_total{reason="user"} 1'
else
	echo "# skipped: a credential of another user needs root and setpriv"
fi
metric 'dtplan_reports_refused_total{reason="unauthenticated"} 1'
metric 'dtplan_reports_refused_total{reason="forged"} 2'
metric 'dtplan_reports_refused_total{reason="replayed"} 1'
metric 'dtplan_reports_refused_total{reason="malformed"} 2'
metric 'dtplan_reports_refused_total{reason="schema"} 1'
# each refusal logged with the address, the uid once the credential is checked, and why
grep -q 'refused a report from 127.0.0.1: unauthenticated: no MUNGE credential' "$tmp/main.log" &&
	_pass "a refusal without a credential is logged with its address" ||
	_fail "no log line for the refusal without a credential"
grep -q "refused a report from 127.0.0.1 uid $(id -u): schema: " "$tmp/main.log" &&
	_pass "a refusal after the credential is logged with its uid" ||
	_fail "no log line with the uid for the schema refusal"
post 200 - "$url/" "$tmp/refused.json" --socket "$sock"
metric 'dtplan_plans_total{state="refused"} 1'
metric 'dtplan_plan_refusals_total{kind="oversubscribed-uplink"} 1'
metric 'dtplan_plan_refusals_total{kind="other"} 1'
# a code not in lib/plan/warnings.c's table ("spread") is counted as other
metric 'dtplan_plan_warnings_total{kind="other"} 1'
post 200 - "$url/" "$tmp/codes.json" --socket "$sock"
metric 'dtplan_plan_warnings_total{kind="other"} 41'
metric 'dtplan_plan_warnings_total{kind="oversubscribed-uplink"} 1'
metric 'dtplan_plan_warnings_total{kind="fabric-service"} 0'
# one series a known code (19 in lib/plan/warnings.c's table) and other
n=$(grep -c '^dtplan_plan_warnings_total{' "$out")
[ "$n" = 20 ] && _pass "dtplan_plan_warnings_total has 20 series after 41 codes" ||
	_fail "dtplan_plan_warnings_total has $n series"
stdout_lacks 'invented-'
promtool_ok
curl -s -o "$out" -w '%{http_code}' "$url/healthz" >"$err"
[ "$(cat "$err")" = 200 ] && [ "$(cat "$out")" = ok ] && _pass "/healthz: 200 ok" ||
	_fail "/healthz answered $(cat "$err") $(cat "$out")"

# the refused plan's reason on the dashboard and on its job's page, escaped
page_has 'policy=deny: &lt;script&gt;alert(2)&lt;/script&gt;'
page_has '<section id="refusals">'
at_has /job/48 '<p class="refusal" id="refusal"><b>Refused</b>: policy=deny: &lt;script&gt;'
at_lacks /job/48 '<script>'
# times: the last report's, and each job's received in UTC ISO 8601 with its age
page_has '<p id="status">Last report <time datetime="'
curl -s "$url/" >"$out"
grep -q '<td class="time"><time datetime="[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9:]\{8\}Z">' "$out" &&
	_pass "a job's time in UTC ISO 8601" || _fail "no job time in UTC ISO 8601"
grep -q '<span class="age">([0-9]* s ago)</span>' "$out" && _pass "a time's age" || _fail "no age"
page_has '<a class="job" href="/job/41">41</a>'

# --- nothing a report says is rendered unescaped ---------------------------
post 200 - "$url/" "$tmp/xss.json" --socket "$sock"
page_lacks "<script>"
page_has "&lt;script&gt;alert(1)&lt;/script&gt;"
at_has /job/46 '<img class="plan" src="/plan/'
at_has /job/46 "Cluster &lt;script&gt;alert(1)&lt;/script&gt;"
at_lacks /job/46 "<script>"
status_is /job/999999 404
status_is '/job/%3Cscript%3E' 404
stdout_lacks '<script>'
status_is '/fabric/leaf/%3Cscript%3E' 404
stdout_lacks '<script>'
id46=$(sqlite3 "$tmp/main.db" "SELECT id FROM reports WHERE job_id = 46")
curl -s -o "$out" -w '%{http_code} %{content_type}\n' "$url/plan/$id46.svg" >"$err"
grep -q '^200 image/svg+xml' "$err" && _pass "the plan's picture is served" || _fail "no plan picture: $(cat "$err")"
stdout_has "<svg"
curl -s -D "$err" -o /dev/null "$url/"
grep -qi "^Content-Security-Policy: default-src 'none'" "$err" && _pass "the page forbids scripts" ||
	_fail "the page has no Content-Security-Policy"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/plan/999999.svg")" = 404 ] && _pass "no such plan: 404" ||
	_fail "a missing plan is not 404"

# --- a slow link: gpu04's links at a fifth of the tier's bandwidth ---------
# Slow is below DTPLAN_STRAGGLER_FRACTION (0.5, lib/dtplan/measure.h) of the
# tier's bandwidth: 2.5e9 of 12.5e9 is 0.2 of it, the healthy 12.5e9 is 1.
python3 - "$plan_in" "$tmp/slow.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
nodes = ["gpu01", "gpu02", "gpu03", "gpu04"]
links = []
for i, a in enumerate(nodes):
    for b in nodes[i + 1:]:
        bw = 2.5e9 if "gpu04" in (a, b) else 12.5e9
        links.append({"a": a, "b": b, "round": 0, "tier": "intra_leaf", "concurrent": False,
                      "ok": True, "samples": 8, "latency_us": 5.0, "latency_spread_us": 0.5,
                      "bandwidth_bytes_per_s": bw})
m = p["measurements"]
m["tiers"]["intra_leaf"] = {"bandwidth_bytes_per_s": 12.5e9, "latency_us": 5.0,
                            "latency_spread_us": 0.5, "links": 6, "measured": True}
m["links"] = links
m["uplinks"] = [{"switch": "leaf1", "oversubscription": 4.0, "configured": 4.0,
                 "aggregate_bytes_per_s": 25e9, "downlink_bytes_per_s": 50e9, "flows": 4,
                 "saturated": True}]
m["stragglers"] = [{"node": "gpu04", "bandwidth_bytes_per_s": 2.5e9,
                    "tier_median_bytes_per_s": 12.5e9}]
json.dump(p, open(sys.argv[2], "w"))
EOF
for job in 51 52; do run 0 report --url "$url/" --plan "$tmp/slow.json" --munge-socket "$sock" --job-id $job; done
metric 'dtplan_node_slow_link_reports{node="gpu04"} 2'
at_lacks /fabric/leaf/leaf1 'class="node slow'
at_has /fabric/leaf/leaf1 'class="node straggler" data-node="gpu04"'
page_has 'class="tile leaf bad" data-switch="leaf1"'
run 0 report --url "$url/" --plan "$tmp/slow.json" --munge-socket "$sock" --job-id 53
metric 'dtplan_node_slow_link_reports{node="gpu04"} 3'
metric 'dtplan_node_slow_link_reports{node="gpu01"} 0'
metric 'dtplan_node_straggler_reports{node="gpu04"} 3'
metric 'dtplan_uplink_oversubscription{switch="leaf1"} 4'
metric 'dtplan_link_bandwidth_bytes_per_second{tier="intra_leaf"} 1.25e+10'
metric 'dtplan_link_latency_seconds{tier="intra_leaf"} 5e-06'
at_has /fabric/leaf/leaf1 'class="node slow straggler" data-node="gpu04"'
at_has /fabric/leaf/leaf1 'class="node" data-node="gpu01"'
page_has 'class="tile leaf bad" data-switch="leaf1"'
# the fabric file names two leaves under the spine: each a tile, leaf2 not measured
page_has 'class="tile leaf unmeasured" data-switch="leaf2" href="/fabric/leaf/leaf2"'
page_has '<h4>under spine</h4>'
at_has /fabric/leaf/leaf2 'class="node" data-node="gpu05"'

# --- the fabric with what was measured --------------------------------------
curl -s "$url/fabric" >"$out"
json_eq 'j["switches"][0]["oversubscription"]' 4.0
json_eq 'j["switches"][0]["x-measured"]["reports"]' 3
json_eq 'j["x-measured"]["stragglers"]["gpu04"]' 3
"$DTPLAN" fabric --help >/dev/null 2>&1
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' "$out" "$tmp/enriched.json"
# the enriched fabric is still one the planner reads
"$DTPLAN" serve --listen 127.0.0.1:0 --db "$tmp/check.db" --fabric "$tmp/enriched.json" 2>"$err" &
p=$!; sleep 0.5
if kill -0 $p 2>/dev/null; then _pass "the enriched fabric parses as fabric JSON"; kill $p; wait $p
else _fail "the enriched fabric does not parse: $(cat "$err")"; fi

# --- observed step times and the calibration ---------------------------------
python3 - "$tmp" <<'EOF'
import json, sys
for job, pred, meas in ((61, 2.0, 2.5), (62, 2.0, 2.3)):
    json.dump({"schema": "dtplan.observation/1", "job_id": job, "user": "root", "cluster": "c1",
               "fingerprint": "ab12", "gpu": "h100-sxm", "model": "llama3-8b",
               "framework": "megatron", "predicted_step_s": pred, "measured_step_s": meas,
               "measured_step_spread_s": 0.1, "steps": 100, "checkpoint_s": None,
               "time": "2026-01-01T00:00:00Z"}, open("%s/obs%d.json" % (sys.argv[1], job), "w"))
obs = json.load(open(sys.argv[1] + "/obs61.json"))
del obs["steps"]
json.dump(obs, open(sys.argv[1] + "/obs-bad.json", "w"))
obs = json.load(open(sys.argv[1] + "/obs61.json"))
obs["fingerprint"] = "AB<12>"
json.dump(obs, open(sys.argv[1] + "/obs-fp.json", "w"))
EOF
post 200 - "$url/" "$tmp/obs61.json" --socket "$sock"
post 200 - "$url/" "$tmp/obs62.json" --socket "$sock"
post 400 malformed "$url/" "$tmp/obs-bad.json" --socket "$sock"
stdout_has 'no member \"steps\"'
post 400 malformed "$url/" "$tmp/obs-fp.json" --socket "$sock"
stdout_has '\"fingerprint\" must be lowercase hex'
metric 'dtplan_reports_accepted_total{kind="observation"} 2'
metric 'dtplan_step_predicted_seconds{gpu="h100-sxm",model="llama3-8b",framework="megatron"} 2'
metric 'dtplan_step_measured_seconds{gpu="h100-sxm",model="llama3-8b",framework="megatron"} 2.4'
# measured / planned: 1.25 and 1.15, in the histogram
metric 'dtplan_step_ratio_bucket{le="1.1"} 0'
metric 'dtplan_step_ratio_bucket{le="1.25"} 2'
metric 'dtplan_step_ratio_bucket{le="+Inf"} 2'
metric 'dtplan_step_ratio_count 2'
curl -s "$url/calibration" >"$out"
json_eq 'j["schema"]' dtplan.calibration/1
json_eq 'j["records"][0]["jobs"]' 2
# the mean of 2.5/2.0 and 2.3/2.0
json_eq 'round(j["records"][0]["correction"], 9)' 1.2
page_has '<svg id="step-plot"'
page_has 'class="point"'

# --- a prolog's measurement file, posted whole: root's only -----------------
python3 - "$tmp/slow.json" "$tmp/meas.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
json.dump({"schema": "dtplan.measurements/1", "job_id": 54, "records": [], "host_record": [],
           "measurements": p["measurements"]}, open(sys.argv[2], "w"))
EOF
post 200 - "$url/" "$tmp/meas.json" --socket "$sock"
metric 'dtplan_reports_accepted_total{kind="measurement"} 1'
metric 'dtplan_node_straggler_reports{node="gpu04"} 4'
promtool_ok
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	post 403 user "$url/" "$tmp/meas.json" --socket "$sock" --as-user nobody
fi

# --- limits: size, rate, retention ------------------------------------------
serve small --max-body 64KiB --rate 0.1
python3 -c 'import sys; open(sys.argv[1], "w").write("{\"pad\": \"" + "x" * 100000 + "\"}")' "$tmp/big.json"
post 413 oversized "$url/" "$tmp/big.json" --socket "$sock"
# --rate 0.1: a bucket of one report, refilled in 10 s (slow enough that a
# slow machine's next post still finds it empty); the oversized one took it
post 429 rate "$url/" "$tmp/r43.json" --socket "$sock"
metric 'dtplan_reports_refused_total{reason="rate"} 1'
metric 'dtplan_reports_refused_total{reason="oversized"} 1'
sleep 10.1
post 200 - "$url/" "$tmp/r43.json" --socket "$sock"
# a flood of refusals, 8 at a time: at most 10 lines a second logged, then how many were not
python3 - "$url" <<'EOF'
import sys, urllib.request, urllib.error
from concurrent.futures import ThreadPoolExecutor
def one(_):
    try:
        urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/", data=b"{}"), timeout=5)
    except Exception:
        pass
with ThreadPoolExecutor(8) as pool:
    list(pool.map(one, range(40)))
EOF
# one more refusal once the log's second is over: refused by the rate, or
# for its size if the flood was slow enough to refill the bucket
sleep 1.1
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary @"$tmp/big.json" "$url/")
case $code in 413 | 429) _pass "a refusal after the flood: $code" ;; *) _fail "after the flood: $code" ;; esac
n=$(grep -c 'refused a report from 127.0.0.1' "$tmp/small.log")
[ "$n" -le 22 ] && _pass "a flood of 41 refusals logged in $n lines" || _fail "a flood logged in $n lines"
grep -q 'suppressed [0-9]* refusal lines' "$tmp/small.log" && _pass "the lines not logged are counted" ||
	_fail "no 'suppressed' line after a flood"
serve keep --keep-reports 3
keep_pid=$!
for job in 42 43 44 45; do
	run 0 report --url "$url/" --plan "$plan_in" --munge-socket "$sock" --job-id $job
done
got=$(sqlite3 "$tmp/keep.db" "SELECT GROUP_CONCAT(job_id, ' ') FROM (SELECT job_id FROM reports ORDER BY id)")
[ "$got" = "43 44 45" ] && _pass "retention keeps the newest 3 reports" || _fail "retention kept jobs '$got'"
# the counters never fall when retention removes a report, nor when the collector restarts
metric 'dtplan_reports_accepted_total{kind="plan"} 4'
metric 'dtplan_plans_total{state="ok"} 4'
metric 'dtplan_reports_kept{kind="plan"} 3'
# a refusal not yet in the store when it stops: kept as it stops
$POST "$url/" "$tmp/r42.json" --cred none >/dev/null 2>&1
kill "$keep_pid"; wait "$keep_pid" 2>/dev/null
serve keep --keep-reports 3
metric 'dtplan_reports_accepted_total{kind="plan"} 4'
metric 'dtplan_reports_refused_total{reason="unauthenticated"} 1'
metric 'dtplan_reports_received_total 5'
curl -s "$url/metrics" >"$out"
grep -q '^dtplan_last_report_timestamp_seconds [0-9]' "$out" && _pass "the last report's time" ||
	_fail "no dtplan_last_report_timestamp_seconds"
promtool_ok
# a version-2 store is upgraded, its counters started at the reports it holds
cp "$tmp/keep.db" "$tmp/v2.db"
sqlite3 "$tmp/v2.db" 'DROP TABLE counters; PRAGMA user_version = 2'
serve v2
metric 'dtplan_reports_accepted_total{kind="plan"} 3'
metric 'dtplan_plans_total{state="ok"} 3'
[ "$(sqlite3 "$tmp/v2.db" 'PRAGMA user_version')" = 4 ] && _pass "a version-2 store upgraded to 4" ||
	_fail "a version-2 store not upgraded"
# a version-3 store gains the index of a job's reports
url_v2=$url
cp "$tmp/keep.db" "$tmp/v3.db"
sqlite3 "$tmp/v3.db" 'DROP INDEX reports_job; DROP INDEX observations_job; PRAGMA user_version = 3'
serve v3
[ "$(sqlite3 "$tmp/v3.db" "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('reports_job', 'observations_job')")" = 2 ] &&
	_pass "a version-3 store upgraded: a job's reports indexed" || _fail "a version-3 store lacks the job indexes"
at_has /job/45 '<h1>Job 45</h1>'
url=$url_v2
# /healthz: 503 and why when the store does not answer
sqlite3 "$tmp/v2.db" 'DROP TABLE counters'
curl -s -o "$out" -w '%{http_code}' "$url/healthz" >"$err"
[ "$(cat "$err")" = 503 ] && _pass "/healthz of a broken store: 503" ||
	_fail "/healthz of a broken store answered $(cat "$err")"
stdout_has "the store does not answer"

# --- the collector down or silent costs dtplan report its --timeout only ----
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(30)' "$tmp/silent.port" &
pids="$pids $!"
i=0; while [ ! -s "$tmp/silent.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
t0=$(date +%s%N)
run 1 report --url "http://127.0.0.1:$(cat "$tmp/silent.port")/" --plan "$plan_in" --munge-socket "$sock" --timeout 1s
dt=$((($(date +%s%N) - t0) / 1000000))
[ "$dt" -lt 2000 ] && _pass "a silent collector: $dt ms with --timeout 1s" || _fail "a silent collector took $dt ms"
t0=$(date +%s%N)
run 1 report --url "http://127.0.0.1:1/" --plan "$plan_in" --munge-socket "$sock" --timeout 1s
dt=$((($(date +%s%N) - t0) / 1000000))
[ "$dt" -lt 2000 ] && _pass "no collector: $dt ms" || _fail "no collector took $dt ms"
# without munged the report goes without a credential, and the collector says why it refuses
run 1 report --url "$url/" --plan "$plan_in" --munge-socket "$tmp/none.sock" --timeout 1s
stderr_has "posted without a credential"

echo "1..$((n_pass + n_fail))"
[ "$n_fail" -eq 0 ]
