#!/bin/sh
# test_job_submit_lua.sh: etc/job_submit.lua with a fake `slurm` table, the
# way slurmctld's job_submit/lua calls it.  Skipped (77) without lua.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
LUA=$(command -v lua5.3 || command -v lua) || { echo "SKIP: no lua interpreter"; exit 77; }

exec "$LUA" - "$top_srcdir/etc/job_submit.lua" <<'LUA'
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

check("bare --dt-plan, 2 nodes: one leaf", {spank_job_env = spank(""), min_nodes = 2,
	max_nodes = NO_VAL}, 1, 600)
check("--dt-plan=strict, 4 nodes (a full leaf)", {spank_job_env = spank("strict"),
	min_nodes = 4, max_nodes = 4}, 1, 600)
check("--dt-plan=auto, 8 nodes: larger than a leaf", {spank_job_env = spank("auto"),
	min_nodes = 8, max_nodes = 8}, NO_VAL, NO_VAL)
check("--dt-plan=off", {spank_job_env = spank("off"), min_nodes = 2}, NO_VAL, NO_VAL)
check("no --dt-plan", {spank_job_env = {[0] = "OTHER=1"}, min_nodes = 2}, NO_VAL, NO_VAL)
check("no spank env at all", {min_nodes = 2}, NO_VAL, NO_VAL)
check("user chose --switches=2", {spank_job_env = spank("auto"), min_nodes = 2,
	req_switch = 2, wait4switch = 60}, 2, 60)
check("node count unknown", {spank_job_env = spank("auto"), min_nodes = NO_VAL,
	max_nodes = NO_VAL}, NO_VAL, NO_VAL)
check("batch job: option in the submit environment", {script = "#!/bin/sh\n",
	environment = {SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan = "auto"},
	min_nodes = 1}, 1, 600)

local found = false
for _, m in ipairs(logged) do
	if m == "dtplan: job of uid 1000 with --dt-plan on 2 node(s): --switches=1@600s" then
		found = true
	end
end
print((found and "ok - " or "not ok - ") .. "log line names uid, nodes and the request")
if not found then fails = fails + 1 end
print(fails == 0 and "# all passed" or ("# " .. fails .. " failed"))
os.exit(fails == 0 and 0 or 1)
LUA
