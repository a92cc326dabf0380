#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The fabric from a service and plans posted to a collector, against a real
# HTTP server on loopback (tests/http_server.py): dtplan plan --fabric-url
# and --report-url, dtplan report, dtplan fabric export.
. "$(dirname "$0")/lib.sh"
unset SLURM_JOB_ID SLURM_CLUSTER_NAME http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 for the test server"; exit 77; }
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
topo="$data/topology-two-racks.conf"
site="$data/dtplan-two-racks.conf"
tmp=$(mktemp -d)
srv=$tmp/srv
mkdir "$srv"
python3 "$top_srcdir/tests/http_server.py" "$srv" &
srv_pid=$!
trap 'kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; rm -rf "$tmp" "$out" "$err"' EXIT
i=0
while [ ! -s "$srv/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$srv/port" ] || { echo "Bail out! the test server did not start"; exit 99; }
url=http://127.0.0.1:$(cat "$srv/port")
closed=http://127.0.0.1:$(cat "$srv/closed_port")/fabric

# The site file of these tests: the two-rack one, plus the cache and bounds.
cache=$tmp/fabric.cache
{
	cat "$site"
	echo "FabricCache=$cache FabricCacheTTL=0 FabricTimeout=1s HttpMaxSize=64KB"
	echo "ReportTimeout=1s"
} >"$tmp/site.conf"
alloc="--model llama3-70b --nodes gpu[01-16] --node-xml gpu[01-16]=$xml"

# now_ms: milliseconds since the epoch.  within SECONDS T0: the time since
# T0 is below SECONDS.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
within() {
	dt=$(($(now_ms) - $2))
	if [ "$dt" -lt $(($1 * 1000)) ]; then _pass "took ${dt} ms, under $1 s"; else _fail "took ${dt} ms, bound $1 s"; fi
}

# same_plan A B: the two plans are equal but for "fabric-service" warnings.
same_plan() {
	got=$(python3 - "$1" "$2" <<-'EOF'
		import json, sys
		a, b = (json.load(open(p)) for p in sys.argv[1:3])
		for j in (a, b):
		    j["warnings"] = [w for w in j["warnings"] if w["code"] != "fabric-service"]
		print("same" if a == b else "differ")
	EOF
	)
	if [ "$got" = same ]; then _pass "plan $2 is plan $1"; else _fail "plan $2 differs from $1"; fi
}

# fabric_warning TEXT: the last plan (stdout, JSON) has one fabric-service
# warning and it holds TEXT.
fabric_warning() {
	got=$(python3 -c 'import json, sys
w = [w["message"] for w in json.load(open(sys.argv[1]))["warnings"] if w["code"] == "fabric-service"]
print(len(w), w[0] if w else "")' "$out")
	case $got in
	"1 "*"$1"*) _pass "fabric-service warning has '$1'" ;;
	*) _fail "fabric-service warning '$got' lacks '$1'" ;;
	esac
}

# ---- dtplan fabric export ----------------------------------------------

# shellcheck disable=SC2086
run 0 fabric export --topology "$topo" --site "$site"
cp "$out" "$srv/fabric.json"
json_eq 'j["schema"], [s["name"] for s in j["switches"]]' "('dtplan.fabric/1', ['leaf1', 'leaf2', 'spine'])"
json_eq '[s.get("oversubscription") for s in j["switches"]], j["switches"][0]["nodes"]' "([4.0, 4.0, None], 'gpu[01-08]')"
json_eq 'j["network"]["bandwidth"]' 50000000000.0
cp "$topo" "$srv/topology.conf"
run 2 fabric export --site "$site"; stderr_has "dtplan fabric export: --topology is required"
run 1 fabric export --topology "$tmp/none.conf"; stderr_has "none.conf"
run 1 fabric export --topology "$data/topology-two-leaves.conf" --site "$data/dtplan-unknown-switch.conf"
stderr_has "SwitchName=leaf9: no switch 'leaf9' in the topology"
run 2 fabric; stderr_has "dtplan fabric: which one? (export)"
run 2 fabric import; stderr_has "unknown subcommand 'import' (expected export)"

# ---- the fabric from a service: the same plan as the same files ----------

# shellcheck disable=SC2086
run 0 plan $alloc --topology "$topo" --site "$site" --json
cp "$out" "$tmp/files.json"
# shellcheck disable=SC2086
run 0 plan $alloc --topology "$topo" --site "$site"
cp "$out" "$tmp/files.txt"

# dtplan.fabric/1 JSON: the whole output is the same, text and JSON
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/files/fabric.json" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "JSON fabric: the plan of the files, byte for byte"; else _fail "JSON fabric: plan differs"; fi
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/files/fabric.json"
if cmp -s "$out" "$tmp/files.txt"; then _pass "JSON fabric: the text of the files"; else _fail "JSON fabric: text differs"; fi
# The JSON replaces the site file's switch lines: a site file without them
# gives the same plan, and so does one whose oversubscription is another.
grep -v '^SwitchName' "$tmp/site.conf" >"$tmp/site-noswitch.conf"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site-noswitch.conf" --fabric-url "$url/files/fabric.json" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "JSON fabric carries the switch settings"; else _fail "JSON fabric lost the switch settings"; fi
# The site's FabricURL= serves as --fabric-url.
echo "FabricURL=$url/files/fabric.json" >>"$tmp/site-noswitch.conf"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site-noswitch.conf" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "FabricURL= in the site file"; else _fail "FabricURL= ignored"; fi

# The format is the answer's Content-Type, or FabricFormat='s: a JSON fabric
# served as text/html is a fault, and read as JSON when the site says so.
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site-noswitch.conf" --fabric-url "$url/files/fabric.json?type=text/html" --json
fabric_warning "the answer's Content-Type is 'text/html', neither application/json (dtplan.fabric/1) nor text/plain (topology.conf)"
{ cat "$tmp/site-noswitch.conf"; echo "FabricFormat=json"; } >"$tmp/site-format.conf"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site-format.conf" --fabric-url "$url/files/fabric.json?type=text/html" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "FabricFormat=json: the answer read as JSON"; else _fail "FabricFormat=json ignored"; fi
echo "FabricFormat=yaml" >"$tmp/site-format.conf"
run 2 plan --model 7B --gpus 8 --site "$tmp/site-format.conf"
stderr_has "FabricFormat: 'yaml' is not a format (expected auto, by the answer's Content-Type, json or topology.conf)"

# topology.conf text: the tree; the site file's switch lines apply to it
rm -f "$cache"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/files/topology.conf" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "topology.conf fabric: the plan of the files"; else _fail "topology.conf fabric: plan differs"; fi
if head -n 1 "$cache" | grep -q "^dtplan-fabric-cache/2 [0-9]* topology.conf $url/files/topology.conf\$"; then
	_pass "the answer is cached"
else
	_fail "no cache written"
fi

# ---- faults: the cache, else the files, and a warning, within the bound ---

# prime the cache of $url/svc with a good answer
echo ok >"$srv/svc.mode"
rm -f "$cache"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/svc" --json
if cmp -s "$out" "$tmp/files.json"; then _pass "service at /svc: the plan of the files"; else _fail "/svc plan differs"; fi
cp "$cache" "$tmp/svc.cache"
for fault in "slow|no answer within 1.00 s" "500|HTTP 500" \
	"malformed|the answer is not a fabric: line 2: not valid JSON" \
	"big|the answer is larger than the 64000 bytes allowed" "loop|more than 3 redirects"; do
	mode=${fault%%|*} text=${fault#*|}
	echo "$mode" >"$srv/svc.mode"
	# with the cache: the service's last answer
	cp "$tmp/svc.cache" "$cache"
	t0=$(now_ms)
	# shellcheck disable=SC2086
	run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/svc" --json
	within 3 "$t0"
	same_plan "$tmp/files.json" "$out"
	fabric_warning "fabric service $url/svc: $text"
	fabric_warning "; using its answer cached in $cache "
	# without: topology.conf
	rm -f "$cache"
	t0=$(now_ms)
	# shellcheck disable=SC2086
	run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$url/svc" --topology "$topo" --json
	within 3 "$t0"
	same_plan "$tmp/files.json" "$out"
	fabric_warning "fabric service $url/svc: $text"
	fabric_warning "; no cached answer: $cache: cannot open"
	fabric_warning "; using topology.conf $topo"
done
# refused: a cache written for that address, then none
{ echo "dtplan-fabric-cache/2 $(($(date +%s) - 3600)) dtplan.fabric/1 $closed"; cat "$srv/fabric.json"; } >"$cache"
t0=$(now_ms)
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$closed" --json
within 3 "$t0"
same_plan "$tmp/files.json" "$out"
fabric_warning "onnect"
fabric_warning "; using its answer cached in $cache 1h 00m ago"
rm -f "$cache"
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$closed" --topology "$topo" --json
same_plan "$tmp/files.json" "$out"
fabric_warning "; using topology.conf $topo"
# nothing at all: no switch tree, and the plan says so
# shellcheck disable=SC2086
run 0 plan $alloc --site "$tmp/site.conf" --fabric-url "$closed" --json
fabric_warning "; planning without a switch tree"
json_eq 'j["placement"]["leaves_used"]' 1

# usage
run 2 plan --model 7B --gpus 8 --fabric-url "$url/svc"; stderr_has "--fabric-url needs --nodes"
# shellcheck disable=SC2086
run 2 plan $alloc --fabric-url ftp://x/y; stderr_has "--fabric-url: 'ftp://x/y' is not an http:// or https:// URL"

# ---- the collector -----------------------------------------------------

reports=$srv/reports.jsonl
nreports() { if [ -f "$reports" ]; then wc -l <"$reports" | tr -d ' '; else echo 0; fi; }
# last_report EXPR VALUE: EXPR on the last report (r) and the plan sent (p).
last_report() {
	got=$(python3 -c 'import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
p = json.load(open(sys.argv[2]))
print(eval(sys.argv[3]))' "$reports" "$tmp/files.json" "$1" 2>&1)
	if [ "$got" = "$2" ]; then _pass "report: $1 == $2"; else _fail "report: $1 is '$got', expected '$2'"; fi
}
me=$(id -un) uid=$(id -u)

# dtplan report: one report, well formed, the plan as it was saved
n0=$(nreports)
run 0 report --url "$url/collect" --plan "$tmp/files.json" --job-id 77
if [ "$(nreports)" -eq $((n0 + 1)) ]; then _pass "one report"; else _fail "$(nreports) reports after $n0"; fi
last_report 'r["schema"], r["sender"], r["job_id"], r["state"], r["reason"]' "('dtplan.report/1', 'dtplan report', 77, 'ok', None)"
last_report 'r["user"], r["uid"]' "('$me', $uid)"
last_report 'r["nodes"], r["plan"] == p, r["warnings"] == p["warnings"]' "('gpu[01-16]', True, True)"
last_report 'r["time"][-1], len(r["time"])' "('Z', 20)"
last_report 'open(sys.argv[1].replace("reports.jsonl", "auth.log")).read().splitlines()[-1]' -
# $SLURM_JOB_ID when --job-id is not given; the site file's ReportURL=
echo "ReportURL=$url/collect" >"$tmp/site-report.conf"
SLURM_JOB_ID=4242
export SLURM_JOB_ID
run 0 report --site "$tmp/site-report.conf" --plan "$tmp/files.json"
unset SLURM_JOB_ID
last_report 'r["job_id"]' 4242
# a bearer token from a private file
printf 'tok-9\n' >"$tmp/token"
chmod 600 "$tmp/token"
run 0 report --url "$url/collect" --plan "$tmp/files.json" --token-file "$tmp/token"
last_report 'open(sys.argv[1].replace("reports.jsonl", "auth.log")).read().splitlines()[-1]' "Bearer tok-9"
chmod 644 "$tmp/token"
n0=$(nreports)
run 1 report --url "$url/collect" --plan "$tmp/files.json" --token-file "$tmp/token"
stderr_has "mode 0644 lets others read or change it"
if [ "$(nreports)" -eq "$n0" ]; then _pass "nothing posted with a public token file"; else _fail "posted anyway"; fi

# dtplan plan --report-url: the plan printed and reported, once
n0=$(nreports)
# shellcheck disable=SC2086
run 0 plan $alloc --topology "$topo" --site "$site" --json --report-url "$url/collect"
if [ "$(nreports)" -eq $((n0 + 1)) ]; then _pass "one report"; else _fail "$(nreports) reports after $n0"; fi
last_report 'r["sender"], r["job_id"], r["plan"] == p' "('dtplan plan', None, True)"
if cmp -s "$out" "$tmp/files.json"; then _pass "--report-url leaves the output alone"; else _fail "output changed"; fi

# A failing collector never fails dtplan plan; dtplan report says it (exit 1).
# The bound of a post takes the credential's making too: what is left of 1 s.
for c in "$url/collect/status/500|HTTP 500" "$url/collect/slow?delay=5|no answer within " \
	"$url/collect/redirect|HTTP 307: redirects are not followed here" \
	"http://127.0.0.1:$(cat "$srv/closed_port")/collect|onnect"; do
	curl=${c%%|*} text=${c#*|}
	n0=$(nreports)
	t0=$(now_ms)
	# shellcheck disable=SC2086
	run 0 plan $alloc --topology "$topo" --site "$tmp/site.conf" --json --report-url "$curl"
	within 3 "$t0"
	stderr_has "dtplan plan: warning: the plan was not reported: "
	stderr_has "$text"
	if cmp -s "$out" "$tmp/files.json"; then _pass "plan printed all the same"; else _fail "plan output changed"; fi
	t0=$(now_ms)
	run 1 report --url "$curl" --plan "$tmp/files.json" --timeout 1s
	within 3 "$t0"
	stderr_has "dtplan report: not reported: "
	stderr_has "$text"
	if [ "$(nreports)" -eq "$n0" ]; then _pass "nothing stored"; else _fail "stored anyway"; fi
done

# A large plan is posted as text, never built into a tree: the report holds
# the plan and its warnings, so dtplan report's peak memory is a small
# multiple of the plan (a Jansson tree costs about 100 bytes a value: these
# 8 million values took over 1 GB).  The bound, 3 plans and 100 MB for the
# program and its libraries, holds under AddressSanitizer too.
python3 - "$tmp/files.json" "$tmp/big-plan.json" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["warnings"] += [{"code": "measurement", "message": "node n%d: no inventory" % i}
	                  for i in range(20000)]
	p["annotations"] = [0] * 8000000
	json.dump(p, open(sys.argv[2], "w"), indent=1)
EOF
n0=$(nreports)
got=$(python3 - "$DTPLAN" "$url/collect" "$tmp/big-plan.json" <<-'EOF'
	import os, resource, subprocess, sys
	rc = subprocess.call([sys.argv[1], "report", "--url", sys.argv[2], "--plan", sys.argv[3],
	                      "--timeout", "60s"])
	peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
	size = os.path.getsize(sys.argv[3])
	bound = 3 * size + 100 * 2**20
	print(rc, "peak %.0f MB for a %.0f MB plan, bound %.0f MB:" % (peak / 2**20, size / 2**20, bound / 2**20),
	      "under" if peak < bound else "over")
EOF
)
case $got in
"0 "*" under") _pass "large plan reported: $got" ;;
*) _fail "large plan: $got" ;;
esac
if [ "$(nreports)" -eq $((n0 + 1)) ]; then _pass "one report of the large plan"; else _fail "$(nreports) reports after $n0"; fi
got=$(python3 -c 'import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
p = json.load(open(sys.argv[2]))
print(r["plan"] == p, r["warnings"] == p["warnings"], len(r["warnings"]) >= 20000)' "$reports" "$tmp/big-plan.json" 2>&1)
if [ "$got" = "True True True" ]; then _pass "the large plan as saved"; else _fail "the large plan's report: $got"; fi
rm -f "$tmp/big-plan.json"

# A plan of 8,000,000 node names (32 MB, one letter each): the report's node
# summary took 1.26 GB (the names at 64 bytes each and their hostlist's
# work).  No plan has more nodes than its text's 64th part (each node runs a
# rank, each rank's entry over 100 bytes): such a list is summarized as
# null and the plan posted whole, within the same bound as above.
python3 - "$tmp/files.json" "$tmp/names-plan.json" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))
	p.setdefault("placement", {})["nodes"] = ["x"] * 8000000
	json.dump(p, open(sys.argv[2], "w"), separators=(",", ":"))
EOF
n0=$(nreports)
got=$(python3 - "$DTPLAN" "$url/collect" "$tmp/names-plan.json" <<-'EOF'
	import os, resource, subprocess, sys
	rc = subprocess.call([sys.argv[1], "report", "--url", sys.argv[2], "--plan", sys.argv[3],
	                      "--timeout", "60s"])
	peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
	size = os.path.getsize(sys.argv[3])
	bound = 3 * size + 100 * 2**20
	print(rc, "peak %.0f MB for a %.0f MB plan, bound %.0f MB:" % (peak / 2**20, size / 2**20, bound / 2**20),
	      "under" if peak < bound else "over")
EOF
)
case $got in
"0 "*" under") _pass "plan of 8,000,000 names reported: $got" ;;
*) _fail "plan of 8,000,000 names: $got" ;;
esac
got=$(python3 -c 'import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(r["nodes"], len(r["plan"]["placement"]["nodes"]))' "$reports" 2>&1)
if [ "$got" = "None 8000000" ]; then _pass "no node summary, the plan whole"; else _fail "the names plan's report: $got"; fi
rm -f "$tmp/names-plan.json"

# bad plans and usage
printf '{"schema": "dtplan.fabric/1"}\n' >"$tmp/notaplan.json"
run 1 report --url "$url/collect" --plan "$tmp/notaplan.json"; stderr_has "$tmp/notaplan.json: not a dtplan.plan/1 document"
run 1 report --url "$url/collect" --plan "$tmp/missing.json"; stderr_has "missing.json"
run 2 report --url "$url/collect"; stderr_has "--plan is required"
run 2 report --plan "$tmp/files.json"; stderr_has "--url is required (or a site file with ReportURL=)"
run 2 report --plan "$tmp/files.json" --url collector:80; stderr_has "--url: 'collector:80' is not an http:// or https:// URL"
run 2 report --plan "$tmp/files.json" --url "$url/collect" --job-id 0; stderr_has "--job-id"
# shellcheck disable=SC2086
run 2 plan $alloc --report-url collector; stderr_has "--report-url: 'collector' is not an http:// or https:// URL"

finish
