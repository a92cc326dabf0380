#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/collector.bats: the collector (dtplan serve) on the test
# cluster's network, with the cluster's munged: --dt-plan=auto jobs post
# their plans to it (ReportURL=), a real Prometheus (Debian's prometheus)
# scrapes its /metrics, and headless Chromium (Debian's chromium) loads its
# page, checked from the DOM (--dump-dom) and a screenshot.  node6 is shaped
# to 100 Mbit/s (a tenth of the others' 1 Gbit/s): its link shows slow on the
# map once three jobs measured it, not before.
#
# The tests run in order and build on each other (one collector, one
# Prometheus for the file).  Skipped without the plugin, prometheus or
# chromium.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

SITE=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-4to1.conf
PLUGSTACK=$CL_DIR/etc/plugstack.conf
DTPLAN=$CLUSTER_TOP_BUILDDIR/cli/dtplan
POST="/usr/bin/python3 $CLUSTER_TOP_SRCDIR/tests/serve_post.py"
PROMETHEUS=$(command -v prometheus || echo /usr/bin/prometheus)
CHROMIUM=$(command -v chromium || echo /usr/bin/chromium)

# free_port: a TCP port nothing listens on now, on loopback.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

setup_file() {
	local i port
	plugstack_save
	D=$BATS_FILE_TMPDIR
	# fd 3 closed: bats would wait for a background process holding it
	"$DTPLAN" serve --listen "$CL_CTLD_ADDR:0" --db "$D/reports.db" \
		--munge-socket "$CL_MUNGE_SOCKET" 3>&- 2>"$D/serve.log" &
	echo $! >"$D/serve.pid"
	for ((i = 0; i < 100; i++)); do
		grep -qs 'listening on port' "$D/serve.log" && break
		sleep 0.1
	done
	port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$D/serve.log")
	[ -n "$port" ] || { cat "$D/serve.log"; return 1; }
	echo "http://$CL_CTLD_ADDR:$port" >"$D/url"
	[ -x "$PROMETHEUS" ] || return 0
	cat >"$D/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		scrape_configs:
		  - job_name: dtplan
		    metrics_path: /metrics
		    static_configs:
		      - targets: ["$CL_CTLD_ADDR:$port"]
	EOF
	free_port >"$D/prom.port"
	"$PROMETHEUS" --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
		--web.listen-address="127.0.0.1:$(cat "$D/prom.port")" 3>&- >"$D/prometheus.log" 2>&1 &
	echo $! >"$D/prometheus.pid"
}

teardown_file() {
	local f
	for f in prometheus serve full; do
		[ -f "$BATS_FILE_TMPDIR/$f.pid" ] || continue
		kill "$(cat "$BATS_FILE_TMPDIR/$f.pid")" 2>/dev/null
		wait "$(cat "$BATS_FILE_TMPDIR/$f.pid")" 2>/dev/null || :
	done
	[ ! -f "$BATS_FILE_TMPDIR/full.mount" ] || umount "$(cat "$BATS_FILE_TMPDIR/full.mount")"
	shape_node node6 "$CL_RACK_RATE"
	plugstack_restore
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	cd "$CL_DIR/jobs" || return 1
	D=$BATS_FILE_TMPDIR
	URL=$(cat "$D/url")
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(cluster_probe_args) probe_budget=5s report_url=$URL/ report_timeout=2s" >"$PLUGSTACK"
}

teardown() {
	cancel_all_wait 60
}

# shape_node NODE RATE: tbf on both ends of NODE's link (as cluster.sh does).
shape_node() {
	tc qdisc replace dev "$(node_netns "$1")" root tbf rate "$2" burst "$CL_BURST" latency 50ms
	in_node "$1" tc qdisc replace dev eth0 root tbf rate "$2" burst "$CL_BURST" latency 50ms
}

# stored N: the store holds N plan reports, within 10 s.
stored() {
	local i n
	for ((i = 0; i < 100; i++)); do
		n=$(sqlite3 "$D/reports.db" "SELECT COUNT(*) FROM reports WHERE kind = 'plan'")
		[ "$n" = "$1" ] && return 0
		sleep 0.1
	done
	echo "the store holds $n plan reports, expected $1"
	cat "$D/serve.log"
	return 1
}

# prom QUERY: the value of an instant query's first series ("" when none).
prom() {
	curl -s --noproxy '*' "http://127.0.0.1:$(cat "$D/prom.port")/api/v1/query" \
		--data-urlencode "query=$1" |
		/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

# prom_wait QUERY VALUE: Prometheus answers VALUE within 30 s (it scrapes each second).
prom_wait() {
	local i v
	for ((i = 0; i < 60; i++)); do
		v=$(prom "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.5
	done
	echo "$1 is '$v', expected '$2'"
	tail -5 "$D/prometheus.log"
	return 1
}

# leaf_pages: every leaf's page the dashboard links to, one after another (the
# dashboard draws a tile a leaf; a node's row is on its leaf's page).
leaf_pages() {
	local href
	for href in $(curl -s --noproxy '*' "$URL/" | grep -o 'href="/fabric/leaf/[^"]*"' |
		sed 's/^href="//; s/"$//' | sort -u); do
		curl -s --noproxy '*' "$URL$href"
	done
}

@test "collector: three jobs with node6 shaped to 100 Mbit/s; its link turns slow on the map at the third" {
	shape_node node6 100mbit
	for i in 1 2 3; do
		run_job 90 -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b --wrap 'echo ran'
		stored "$i"
		leaf_pages >"$D/page$i.html"
		if [ "$i" -lt 3 ] && grep -q 'class="node slow[^"]*" data-node="node6"' "$D/page$i.html"; then
			echo "node6 shown slow after $i jobs"
			return 1
		fi
	done
	grep -q 'class="node slow[^"]*" data-node="node6"' "$D/page3.html"
	grep -q 'class="node[^"]*" data-node="node6" data-slow-reports="3" data-reports="3"' "$D/page3.html"
	# its leaf is bad on the dashboard
	curl -s --noproxy '*' "$URL/" | grep -q 'class="tile leaf bad"'
	# every job's report came from the plugin as root.  (Whether the other
	# nodes stay off the map's slow list is not asserted: a node whose links
	# mostly run to node6, or any node on a loaded machine, can turn slow
	# too under the map's rule; the stragglers below name node6 alone.)
	sed -n 's/.*class="node slow[^"]*" data-node="\(node[0-9]*\)".*/slow on the map: \1/p' "$D/page3.html"
	[ "$(sqlite3 "$D/reports.db" "SELECT DISTINCT sender || ' ' || user FROM reports")" = "plugin root" ]
	# every job names node6 a straggler
	[ "$(sqlite3 "$D/reports.db" "SELECT COUNT(*) FROM stragglers WHERE node = 'node6'")" = 3 ]
}

@test "collector: reports without a credential, forged or replayed are refused and counted" {
	local body=$D/report.json
	sqlite3 "$D/reports.db" "SELECT body FROM reports WHERE kind = 'plan' LIMIT 1" >"$body"
	run -0 $POST "$URL/" "$body" --cred none
	[ "${lines[0]}" = 401 ]
	sed 's/"job_id":[0-9]*/"job_id":990001/' "$body" >"$D/fresh.json"
	# a credential of the cluster's munged, but for another body: a forgery
	run -0 $POST "$URL/" "$body" --socket "$CL_MUNGE_SOCKET" --for-body "$D/fresh.json"
	[ "${lines[0]}" = 403 ]
	[[ "${lines[1]}" == *'"refused":"forged"'* ]]
	# from a node, with the cluster's munged: taken once, refused the second time
	run -0 in_node node2 $POST "$URL/" "$D/fresh.json" --socket "$CL_MUNGE_SOCKET" --save-cred "$D/cred"
	[ "${lines[0]}" = 200 ]
	run -0 in_node node2 $POST "$URL/" "$D/fresh.json" --cred "$D/cred"
	[ "${lines[0]}" = 409 ]
	curl -s --noproxy '*' "$URL/metrics" >"$D/metrics"
	grep -qx 'dtplan_reports_refused_total{reason="unauthenticated"} 1' "$D/metrics"
	grep -qx 'dtplan_reports_refused_total{reason="forged"} 1' "$D/metrics"
	grep -qx 'dtplan_reports_refused_total{reason="replayed"} 1' "$D/metrics"
}

@test "collector: an observed step time posted from a node puts a point on the plot" {
	/usr/bin/python3 - "$D/obs.json" <<-'EOF'
		import json, sys
		json.dump({"schema": "dtplan.observation/1", "job_id": 990002, "user": "root",
		           "cluster": "dtplan-test", "fingerprint": "00ff", "gpu": "h100-sxm",
		           "model": "llama3-8b", "framework": "megatron", "predicted_step_s": 1.5,
		           "measured_step_s": 1.8, "measured_step_spread_s": 0.05, "steps": 50,
		           "checkpoint_s": None, "time": "2026-01-01T00:00:00Z"}, open(sys.argv[1], "w"))
	EOF
	run -0 in_node node3 $POST "$URL/" "$D/obs.json" --socket "$CL_MUNGE_SOCKET"
	[ "${lines[0]}" = 200 ]
	curl -s --noproxy '*' "$URL/" | grep -q '<circle class="point"'
}

@test "collector: Prometheus scrapes it: plans, refusals, node6 slow in three reports" {
	[ -x "$PROMETHEUS" ] || skip "no prometheus (Debian's prometheus package)"
	prom_wait 'up{job="dtplan"}' 1
	prom_wait 'dtplan_reports_accepted_total{kind="plan"}' 4
	prom_wait 'dtplan_reports_accepted_total{kind="observation"}' 1
	prom_wait 'dtplan_reports_refused_total{reason="replayed"}' 1
	prom_wait 'dtplan_node_slow_link_reports{node="node6"}' 4
	prom_wait 'dtplan_node_slow_link_reports{node="node1"}' 0
	prom_wait 'dtplan_node_straggler_reports{node="node6"}' 4
	# the measured uplinks: leaves at 4:1 and more (200 Mbit/s under four 1 Gbit/s nodes)
	v=$(prom 'dtplan_uplink_oversubscription{switch="leaf1"}')
	echo "leaf1 measured oversubscription: $v"
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) >= 2.0' "$v"
}

@test "collector: headless Chromium renders the page: leaves with node6's bad, a job's plan picture, the plot" {
	[ -x "$CHROMIUM" ] || skip "no chromium (Debian's chromium package)"
	local chrome=("$CHROMIUM" --headless --no-sandbox --disable-gpu --no-proxy-server
		--user-data-dir="$D/chromium" --window-size=1400,1800)
	timeout 60 "${chrome[@]}" --dump-dom "$URL/" >"$D/dom.html" 2>"$D/chromium.log"
	grep -q '<section id="fabric">' "$D/dom.html"
	grep -q 'class="tile leaf [a-z]*" data-switch="leaf1"' "$D/dom.html"
	grep -q '<p id="status">Last report <time datetime="' "$D/dom.html"
	# node6 slow on its leaf's page (the dashboard draws leaves, not nodes)
	local href found=
	for href in $(grep -o 'href="/fabric/leaf/[^"]*"' "$D/dom.html" | sed 's/^href="//; s/"$//' | sort -u); do
		curl -s --noproxy '*' "$URL$href" | grep -q 'class="node slow[^"]*" data-node="node6"' && found=$href
	done
	echo "node6 slow on $found"
	[ -n "$found" ]
	[ "$(grep -o '<a class="job" href="/job/[0-9]*"' "$D/dom.html" | sort -u | wc -l)" -ge 3 ]
	grep -q '<svg id="step-plot"' "$D/dom.html"
	grep -q '<g class="legend">' "$D/dom.html"
	grep -q '<circle class="point"' "$D/dom.html"
	# a job's page: its plan's picture
	href=$(grep -o '/job/[0-9]*' "$D/dom.html" | head -1)
	timeout 60 "${chrome[@]}" --dump-dom "$URL$href" >"$D/job.html" 2>>"$D/chromium.log"
	src=$(grep -o '<img class="plan" src="/plan/[0-9]*.svg"' "$D/job.html" | grep -o '/plan/[0-9]*.svg' | head -1)
	[ -n "$src" ]
	[ "$(curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{content_type}' "$URL$src")" = "200 image/svg+xml" ]
	timeout 60 "${chrome[@]}" --screenshot="$D/page.png" "$URL/" 2>>"$D/chromium.log"
	cp "$D/page.png" "$CL_DIR/jobs/collector-page.png"
	# the screenshot: the page's size, and the tiles' colours drawn: red (#ef9a9a,
	# a bad leaf: node6's) and green (#a5d6a7, fine)
	run -0 /usr/bin/python3 - "$D/page.png" <<-'EOF'
		import struct, sys, zlib
		data = open(sys.argv[1], "rb").read()
		assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
		pos, idat, w = 8, b"", 0
		while pos < len(data):
		    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
		    chunk = data[pos + 8:pos + 8 + n]
		    if kind == b"IHDR":
		        w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
		    elif kind == b"IDAT":
		        idat += chunk
		    pos += 12 + n
		assert depth == 8 and ctype in (2, 6), (depth, ctype)
		bpp = 3 if ctype == 2 else 4
		raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
		for y in range(h):
		    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
		    for i in range(stride):
		        a = line[i - bpp] if i >= bpp else 0
		        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
		        p = a + b - c
		        pr = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
		        line[i] = (line[i] + (0, a, b, (a + b) // 2, pr)[f]) & 255
		    rows.append(line)
		    prev = line
		count = lambda rgb: sum(1 for r in rows for x in range(0, stride, bpp) if tuple(r[x:x + 3]) == rgb)
		red, green = count((0xef, 0x9a, 0x9a)), count((0xa5, 0xd6, 0xa7))
		print("screenshot %dx%d: %d red, %d green pixels" % (w, h, red, green))
		assert w == 1400 and red > 100 and green > 100
	EOF
	echo "$output"
}

@test "collector: a collector whose store is full answers 503 at once; the job starts within its budget" {
	local full=$D/full t0 start
	mkdir -p "$full"
	mount -t tmpfs -o size=256k tmpfs "$full" || skip "cannot mount a tmpfs"
	echo "$full" >"$D/full.mount"
	"$DTPLAN" serve --listen "$CL_CTLD_ADDR:0" --db "$full/reports.db" \
		--munge-socket "$CL_MUNGE_SOCKET" 3>&- 2>"$D/full.log" &
	echo $! >"$D/full.pid"
	for ((i = 0; i < 100; i++)); do grep -qs 'listening on port' "$D/full.log" && break; sleep 0.1; done
	port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$D/full.log")
	# fill the file system to the last byte
	dd if=/dev/zero of="$full/fill" bs=4k 2>/dev/null || :
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(cluster_probe_args) probe_budget=5s report_url=http://$CL_CTLD_ADDR:$port/" \
		"report_timeout=1s" >"$PLUGSTACK"
	t0=$(($(date +%s%N) / 1000000))
	run_job 90 -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		--wrap 'echo "START $(($(date +%s%N) / 1000000))"'
	start=$(sed -n 's/^START //p' <<<"$LOG")
	echo "job $JOB started $((start - t0)) ms after sbatch (budget: probe 5 s, report 1 s)"
	[ $((start - t0)) -lt 9000 ]
	host=$(job_field "$JOB" BatchHost)
	grep "dtplan: report: cannot post the plan of job $JOB: .*HTTP 503" "$CL_DIR/log/slurmd-$host.log"
	curl -s --noproxy '*' "http://$CL_CTLD_ADDR:$port/metrics" | grep -qx 'dtplan_reports_refused_total{reason="storage"} 1'
	[ "$(job_state "$JOB")" = COMPLETED ]
}
