#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cli/test_probe.sh: dtplan probe in a one-node step (no other node
# to meet, so no munged is needed) and dtplan plan --measurements with what
# it saves.  The multi-node probe runs on the test cluster
# (tests/cluster/measure.bats) and on loopback (tests/test_probe.c).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/cli/lib.sh"
data="$top_srcdir/tests/data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

run 0 probe --help
stdout_starts "Usage: srun -N N --ntasks-per-node=1 dtplan probe"
run 0 help probe
stdout_starts "Usage: srun -N N --ntasks-per-node=1 dtplan probe"

# Outside a Slurm step: a usage error naming what is missing.
env -u SLURM_STEP_NODELIST -u SLURM_NODEID "$DTPLAN" probe >"$out" 2>"$err"
if [ $? -eq 2 ] && grep -q "not in a Slurm step (SLURM_STEP_NODELIST" "$err"; then
	_pass "probe outside a step exits 2"
else
	_fail "probe outside a step"
fi

# A one-node step: the node is its own leader.
SLURM_JOB_ID=77 SLURM_STEP_ID=3 SLURM_STEP_NODELIST=gpu01 SLURM_NODEID=0
export SLURM_JOB_ID SLURM_STEP_ID SLURM_STEP_NODELIST SLURM_NODEID
run 0 probe --json --node-xml "$data/hgx-h100-8gpu.xml" --output "$tmp/m.json"
json_eq 'j["nodes"], j["nodes_reported"], j["source"], j["hosts"], j["missing"]' "(1, 1, 'probe', ['gpu01'], [])"
json_eq 'j["budget_seconds"], j["tiers"]["intra_leaf"]["measured"], j["links"]' "(5.0, False, [])"
cp "$out" "$tmp/bare.json"
run 0 probe --node-xml "$data/hgx-h100-8gpu.xml" --budget 2s
stdout_has "dtplan probe: 1 of 1 nodes measured in "
stdout_has "(budget 2 s)"
stdout_has "  intra-leaf   not measured"

# A user's run: the prolog's default ports (500-599) are root's only, so it
# listens on 30500-30599 (issue 26); --ports below 1024 is the user's to fix.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$DTPLAN" "$@" >"$out" 2>"$err"; }
	if as_nobody probe --json --node-xml "$data/hgx-h100-8gpu.xml"; then
		_pass "probe as nobody with the default ports exits 0"
	else
		_fail "probe as nobody with the default ports"
	fi
	json_eq 'j["nodes"], j["nodes_reported"]' "(1, 1)"
	if ! as_nobody probe --json --node-xml "$data/hgx-h100-8gpu.xml" --ports 500-599 &&
		grep -q "cannot listen on " "$err" && grep -q "Permission denied" "$err"; then
		_pass "probe as nobody on ports 500-599 fails and says why"
	else
		_fail "probe as nobody on ports 500-599"
	fi
else
	echo "# skipped: the run as a user (needs root and setpriv)"
fi

# Bad values name the setting; a node id outside the step is refused.
run 2 probe --budget 0.1s
stderr_has "probe_budget: '0.1s' is out of range"
run 2 probe --ports 30599-30500
stderr_has "probe_ports: '30599-30500': the first port is above the last"
SLURM_NODEID=1 run 2 probe
stderr_has "SLURM_NODEID"

# plan --measurements: the saved file's inventory and hosts are the allocation.
run 0 plan --model llama3-8b --measurements "$tmp/m.json" --json
json_eq 'j["placement"]["nodes"], j["gpus"]' "(['gpu01'], 8)"
json_eq 'j["measurements"]["source"], j["measurements"]["used"]["inventories"]' "('probe', 'measured')"
json_eq '[w["code"] for w in j["warnings"] if w["code"] == "assumed-nodes"]' "[]"
run 0 plan --model llama3-8b --measurements "$tmp/m.json"
stdout_has "  measured     1 of 1 nodes by the probe in "
stdout_has "  figures      inventories measured; bandwidth and latency assumed"
# the bare object of probe --json has no inventories: the node is generic
run 0 plan --model llama3-8b --measurements "$tmp/bare.json" --json
json_eq 'j["measurements"]["used"]["inventories"]' "assumed"
# more nodes than the measurement knows: they take its node's inventory
run 0 plan --model llama3-8b --measurements "$tmp/m.json" --nodes 'gpu[01-02]'
stdout_has "[assumed-nodes] 1 of 2 nodes (gpu02) have no inventory: assumed equal to gpu01 ("
run 1 plan --model llama3-8b --measurements "$tmp/nonexistent.json"
stderr_has "nonexistent.json"
printf '{"hosts": ["a"], "nodes": 2}' >"$tmp/bad.json"
run 2 plan --model llama3-8b --measurements "$tmp/bad.json"
stderr_has "nodes: not the 1 hosts"

finish
