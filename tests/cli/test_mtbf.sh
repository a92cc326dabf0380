#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cli/test_mtbf.sh: dtplan mtbf over saved parsable output of
# `sacctmgr -P -n show event event=node format=NodeName,Start,End,State,Reason`
# and `sacct -P -n -X -a --state=NODE_FAIL --format=JobIDRaw,NodeList,Start,End,State`.
#
# 8 nodes x 8 GPUs over one day: 1536 GPU-hours; two DOWN events (the DRAIN
# is the admin's): 768 GPU-hours per GPU; the 90% exact chi-square interval
# 2T/chi2(0.95; 6) to 2T/chi2(0.05; 4) = 3072/12.592 to 3072/0.7107 = 244.0 to
# 4322.4 (chi-square table, NIST/SEMATECH e-Handbook 1.3.6.7.4).
. "$(dirname "$0")/lib.sh"

TZ=UTC
export TZ
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err" "$out.state"' EXIT
cat >"$tmp/events" <<'EOF_EV'
node3|2026-12-01T10:05:00|2026-12-01T10:20:00|DOWN|Not responding
node5|2026-12-01T11:00:00|Unknown|DRAIN|maintenance
node7|2026-12-01T12:00:00|Unknown|DOWN*|Kill task failed
EOF_EV
cat >"$tmp/jobs" <<'EOF_J'
41|node[3-4]|2026-12-01T10:00:00|2026-12-01T10:06:00|NODE_FAIL
EOF_J
w="--start 2026-12-01T00:00:00 --end 2026-12-02T00:00:00"

run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events" --jobs "$tmp/jobs"
stdout_has "8 nodes x 8 GPUs = 1536.0 GPU-hours"
stdout_has "2 node-down events; 1 jobs ended NODE_FAIL"
stdout_has "MTBF per GPU  768.0 GPU-hours, 90% interval 244.0 to 4322.4 (exact chi-square, Poisson)"
stdout_has "node7        DOWN*"
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events" --jobs "$tmp/jobs" --json
json_eq 'j["failures"], j["node_fail_jobs"], j["mtbf_gpu_hours"]' "(2, 1, 768)"
json_eq 'round(j["lower_gpu_hours"], 1), round(j["upper_gpu_hours"], 1)' "(244.0, 4322.4)"
json_eq 'j["interval"]' "exact chi-square (Poisson, time-truncated)"
json_eq 'len(j["events"]), j["jobs"][0]["job_id"]' "(3, 41)"
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events" --jobs "$tmp/jobs" --confidence 0.95 --json
json_eq 'j["confidence"]' 0.95
printf '' >"$tmp/none"
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/none" --jobs "$tmp/none"
stdout_has "no failure: at least 667 GPU-hours (90% one-sided)"

# MTBF=slurm: plans take the cached figure and say where it came from
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events" --jobs "$tmp/jobs" --write-cache "$tmp/mtbf.json"
printf 'MTBF=slurm\nMtbfCache=%s\n' "$tmp/mtbf.json" >"$tmp/site.conf"
run 0 plan --model llama3-8b --gpus 16 --site "$tmp/site.conf" --json
json_eq 'int(j["checkpoint"]["job_mtbf_seconds"])' "$((768 * 3600 / 16))"
json_eq 'j["checkpoint"]["mtbf_source"][:53]' "Slurm accounting: 2 failures in 1536 GPU-hours, 2026-"
run 0 plan --model llama3-8b --gpus 16 --site "$tmp/site.conf"
stdout_has "(768 GPU-hours per GPU, Slurm accounting: 2 failures in 1536 GPU-hours, 2026-12-01 to 2026-12-02, cached"
printf 'MTBF=slurm\nMtbfCache=%s\nMtbfGpuHours=1000\n' "$tmp/missing.json" >"$tmp/site2.conf"
run 0 plan --model llama3-8b --gpus 16 --site "$tmp/site2.conf" --json
stderr_has "warning: the site's MtbfGpuHours= (MTBF=slurm:"
json_eq 'int(j["checkpoint"]["job_mtbf_seconds"])' "$((1000 * 3600 / 16))"
printf 'MTBF=weekly\n' >"$tmp/site3.conf"
run 0 plan --model llama3-8b --gpus 16 --site "$tmp/site3.conf"
stderr_has "MTBF: 'weekly' unknown"

# a reason with '|' (sacctmgr -P does not escape it) is read whole, and the
# cache is still written; events and jobs of nodes outside --nodes, and an
# event or job seen twice, are not counted: the same 2 failures
cat "$tmp/events" >"$tmp/events2"
cat >>"$tmp/events2" <<'EOF_EV'
node3|2026-12-01T10:05:00|2026-12-01T10:20:00|DOWN|Not responding
node9|2026-12-01T13:00:00|Unknown|DOWN|GPU|XID 79|fell off the bus
node2|2026-12-01T14:00:00|Unknown|DOWN|health check: nvidia-smi|grep failed
EOF_EV
cat "$tmp/jobs" "$tmp/jobs" >"$tmp/jobs2"
echo '43|node[9-10]|2026-12-01T12:00:00|2026-12-01T13:01:00|NODE_FAIL' >>"$tmp/jobs2"
rm -f "$tmp/mtbf.json"
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events2" --jobs "$tmp/jobs2" --write-cache "$tmp/mtbf.json"
stdout_has "3 node-down events; 1 jobs ended NODE_FAIL"
stdout_has "not counted   2 of other nodes than --nodes, 2 repeated"
stdout_has "health check: nvidia-smi|grep failed"
[ -s "$tmp/mtbf.json" ] && _pass "the cache is written" || _fail "no cache"
run 0 mtbf --nodes 'node[1-8]' $w --events "$tmp/events2" --jobs "$tmp/jobs2" --json
json_eq 'j["failures"], j["node_fail_jobs"], j["other_nodes"], j["repeated"]' "(3, 1, 2, 2)"
json_eq 'j["events"][-1]["reason"]' "health check: nvidia-smi|grep failed"

printf 'node3 DOWN Not responding\n' >"$tmp/people"
run 1 mtbf --nodes node1 $w --events "$tmp/people" --jobs "$tmp/none"
stderr_has "sacctmgr:1: 5 fields expected (parsable output"
run 2 mtbf --nodes node1 $w --events "$tmp/events"; stderr_has "--events and --jobs go together"
run 2 mtbf --nodes node1 --start yesterday; stderr_has "--start: 'yesterday' is not"
run 2 mtbf --nodes node1 --start 2026-12-02T00:00:00 --end 2026-12-01T00:00:00
stderr_has "the window ends before it starts"
run 2 mtbf; stderr_has "--nodes is required"
run 0 mtbf --help; stdout_starts "Usage: dtplan mtbf"

echo "1..$((n_pass + n_fail))"
[ "$n_fail" -eq 0 ]
