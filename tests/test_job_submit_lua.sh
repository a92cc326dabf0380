#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_job_submit_lua.sh: etc/job_submit.lua with a fake `slurm` table, the
# way slurmctld's job_submit/lua calls it, on hand-made topology.conf files
# found beside $SLURM_CONF as slurmctld would.  Skipped (77) without lua.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
LUA=$(command -v lua5.3 || command -v lua) || { echo "SKIP: no lua interpreter"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Leaves of 8, 4 and 4 nodes (and a spine): a job of up to 8 nodes fits one,
# 9 to 12 need two (8 + 4), 13 to 16 three, 17 none.
mkdir -p "$tmp/tree" "$tmp/block" "$tmp/none" "$tmp/bad"
cat >"$tmp/tree/topology.conf" <<'EOF'
# a comment, Nodes=x[1-100] in it
SwitchName=leafA Nodes=gpu[01-04,09-12]
switchname=leafB nodes=gpu[13-14],gpu20,gpu21 LinkSpeed=400Gb/s
SwitchName=leafC Nodes=r[1-2]n[1-2]
SwitchName=spine Switches=leaf[A-C]
EOF
cat >"$tmp/block/topology.conf" <<'EOF'
BlockName=b1 Nodes=gpu[01-18]
BlockSizes=18,36
EOF
printf 'SwitchName=leafA Nodes=gpu[04-01]\n' >"$tmp/bad/topology.conf"

run() { # run DIR: the test below, with slurm.conf in DIR
	SLURM_CONF="$1/slurm.conf" "$LUA" - "$top_srcdir/etc/job_submit.lua" "$1"
}

run "$tmp/tree" <<'LUA' || exit 1
local NO_VAL = 4294967294
local logged = {}
slurm = {SUCCESS = 0, ERROR = -1, NO_VAL = NO_VAL,
	log_info = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end}
dofile(arg[1])

local fails = 0
local function check(name, job, want_switch, want_wait)
	job.req_switch = job.req_switch or NO_VAL
	job.wait4switch = job.wait4switch or NO_VAL
	local rc = slurm_job_submit(job, {}, 1000)
	local ok = rc == slurm.SUCCESS and job.req_switch == want_switch and
		job.wait4switch == want_wait
	print((ok and "ok - " or "not ok - ") .. name)
	if not ok then
		print(string.format("#   rc %s req_switch %s wait4switch %s", rc, job.req_switch,
			job.wait4switch))
		fails = fails + 1
	end
end

local function spank(value)
	return {[0] = "OTHER=1", [1] = "_SLURM_SPANK_OPTION_dtplan_dt_plan=" .. value}
end
local function job(nodes, plan)
	return {spank_job_env = spank(plan or "auto"), min_nodes = nodes, max_nodes = nodes}
end

check("bare --dt-plan, 2 nodes: one leaf", {spank_job_env = spank(""), min_nodes = 2,
	max_nodes = NO_VAL}, 1, 600)
check("--dt-plan=strict, 8 nodes: the largest leaf", job(8, "strict"), 1, 600)
check("9 nodes: two leaves (8 + 4)", job(9), 2, 600)
check("12 nodes: two leaves (8 + 4)", job(12), 2, 600)
check("13 nodes: three leaves", job(13), 3, 600)
check("16 nodes: the whole tree", job(16), 3, 600)
check("17 nodes: more than the tree holds", job(17), NO_VAL, NO_VAL)
check("--dt-plan=off", job(2, "off"), NO_VAL, NO_VAL)
check("no --dt-plan", {spank_job_env = {[0] = "OTHER=1"}, min_nodes = 2}, NO_VAL, NO_VAL)
check("no spank env at all", {min_nodes = 2}, NO_VAL, NO_VAL)
check("user chose --switches=2", {spank_job_env = spank("auto"), min_nodes = 2,
	req_switch = 2, wait4switch = 60}, 2, 60)
check("node count unknown", {spank_job_env = spank("auto"), min_nodes = NO_VAL,
	max_nodes = NO_VAL}, NO_VAL, NO_VAL)
check("batch job: option in the submit environment", {script = "#!/bin/sh\n",
	environment = {SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan = "auto"},
	min_nodes = 1}, 1, 600)

local want = {
	"dtplan: job of uid 1000 with --dt-plan on 2 node(s): --switches=1@600s",
	"dtplan: job of uid 1000 with --dt-plan on 9 node(s): --switches=2@600s",
}
for _, w in ipairs(want) do
	local found = false
	for _, m in ipairs(logged) do
		found = found or m == w
	end
	print((found and "ok - " or "not ok - ") .. "log: " .. w)
	if not found then fails = fails + 1 end
end
print(fails == 0 and "# all passed" or ("# " .. fails .. " failed"))
os.exit(fails == 0 and 0 or 1)
LUA

# Without a tree: block topology, no file, a hostlist it cannot read.  No job
# is changed and the load says why.
for case in block none bad; do
	run "$tmp/$case" <<'LUA' || exit 1
local NO_VAL = 4294967294
local logged = {}
slurm = {SUCCESS = 0, NO_VAL = NO_VAL,
	log_info = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end}
dofile(arg[1])
local job = {spank_job_env = {[0] = "_SLURM_SPANK_OPTION_dtplan_dt_plan=auto"},
	min_nodes = 2, max_nodes = 2, req_switch = NO_VAL, wait4switch = NO_VAL}
local ok = slurm_job_submit(job, {}, 1000) == slurm.SUCCESS and job.req_switch == NO_VAL
local path = arg[2] .. "/topology.conf"
local why = {
	block = path .. " describes blocks (topology/block): left to Slurm",
	none = "cannot read " .. path,
	bad = path .. ":1: cannot read Nodes=gpu[04-01]",
}
local case = string.match(arg[2], "[^/]*$")
local said = logged[1] == "dtplan: " .. why[case] .. "; jobs keep their own --switches"
print(((ok and said) and "ok - " or "not ok - ") .. case .. ": no job changed, load says why")
if not (ok and said) then
	print("#   " .. tostring(logged[1]))
	os.exit(1)
end
LUA
done
echo "# all passed"
