-- SPDX-License-Identifier: GPL-2.0-or-later
--[[
 job_submit.lua: keep dtplan jobs on as few leaf switches as their size allows.

 For Slurm's job_submit/lua plugin (JobSubmitPlugins=lua in slurm.conf;
 the file lives beside slurm.conf).  A job that asks for a dtplan plan
 (sbatch --dt-plan, --dt-plan=auto or =strict) gets --switches=K@WAIT4SWITCH,
 K the fewest leaf switches of the site's topology.conf that hold its nodes
 (the largest leaves first, as dtplan's plan counts them): the scheduler
 then prefers an allocation on K leaves, where the fewest groups cross an
 oversubscribed uplink, and gives up waiting for one after WAIT4SWITCH
 seconds.  A job that chose --switches itself is left alone, and so is one
 whose node count is unknown at submission.

 The leaf sizes come from topology.conf, read once when slurmctld loads this
 script: each "SwitchName=... Nodes=HOSTLIST" line is a leaf of that many
 nodes.  The file is TOPOLOGY_FILE below when set, else topology.conf beside
 slurm.conf (the folder of $SLURM_CONF, else /etc/slurm).  A topology/block
 site (BlockName= lines) is left alone: Slurm's block plugin already packs a
 job into the fewest blocks, and --segment is set at submission by
 etc/cli_filter.lua (dtplan segment, run in sbatch as the user), or chosen
 by the user; this script never changes it, so on Slurm 26.05, whose
 job_submit/lua can read and set job_desc.segment_size, the segment the
 user's cli_filter set is kept as it is.  Without a
 readable tree, LEAF_NODES (nodes per leaf, all leaves alike) is used when
 set; otherwise the script logs why and changes no job.

 The wait: slurmctld caps every job's --switches wait at max_switch_wait
 (SchedulerParameters=max_switch_wait=SECONDS in slurm.conf, default 300 s),
 so a WAIT4SWITCH above it waits max_switch_wait only.  Raise both together.

 How the option is seen here (Slurm 22.05): sbatch/salloc/srun send SPANK
 option values in the job's spank_job_env as
 "_SLURM_SPANK_OPTION_dtplan_dt_plan=<value>" (empty for a bare --dt-plan);
 the job later sees them as SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan.
 For batch jobs the submit environment is checked too.
--]]

-- topology.conf to read (nil: beside slurm.conf); nodes per leaf when no
-- tree can be read (nil: change no job then); how long a job may wait for
-- its leaves (capped by max_switch_wait).
local TOPOLOGY_FILE = nil
local LEAF_NODES = nil
local WAIT4SWITCH = 600 -- seconds

local OPTION = "_SLURM_SPANK_OPTION_dtplan_dt_plan"

-- Names a Slurm hostlist expression stands for: "a[01-04,09],b7" is 6.
-- Each comma-separated item multiplies the sizes of its bracket groups.
-- Returns nil for an expression it cannot read.
local function hostlist_count(expr)
	local total, depth, item = 0, 0, ""
	local function add(it)
		if it == "" then
			return true
		end
		local n = 1
		for ranges in string.gmatch(it, "%[([^%]]*)%]") do
			local k = 0
			for r in string.gmatch(ranges, "[^,]+") do
				local lo, hi = string.match(r, "^(%d+)%-(%d+)$")
				if lo ~= nil then
					if tonumber(hi) < tonumber(lo) then
						return false
					end
					k = k + tonumber(hi) - tonumber(lo) + 1
				elseif string.match(r, "^%d+$") then
					k = k + 1
				else
					return false
				end
			end
			n = n * k
		end
		total = total + n
		return true
	end
	for c in string.gmatch(expr, ".") do
		if c == "[" then
			depth = depth + 1
		elseif c == "]" then
			depth = depth - 1
		end
		if depth < 0 or depth > 1 then
			return nil
		end
		if c == "," and depth == 0 then
			if not add(item) then
				return nil
			end
			item = ""
		else
			item = item .. c
		end
	end
	if depth ~= 0 or not add(item) then
		return nil
	end
	return total
end

-- The topology file's path by the rule above.
local function topology_path()
	if TOPOLOGY_FILE ~= nil then
		return TOPOLOGY_FILE
	end
	local conf = os.getenv("SLURM_CONF")
	local dir = conf and string.match(conf, "^(.*)/[^/]*$") or "/etc/slurm"
	if dir == "" then
		dir = "/"
	end
	return dir .. "/topology.conf"
end

-- Leaf sizes, largest first, from the topology file; nil and why when none.
local function read_leaves(path)
	local f = io.open(path, "r")
	if f == nil then
		return nil, "cannot read " .. path
	end
	local sizes, lineno = {}, 0
	for line in f:lines() do
		lineno = lineno + 1
		line = string.gsub(line, "#.*$", "")
		if string.match(line, "^%s*[Bb][Ll][Oo][Cc][Kk][Nn][Aa][Mm][Ee]=") then
			f:close()
			return nil, path .. " describes blocks (topology/block): left to Slurm"
		end
		local nodes = string.match(line, "[Nn][Oo][Dd][Ee][Ss]=(%S+)")
		if string.match(line, "^%s*[Ss][Ww][Ii][Tt][Cc][Hh][Nn][Aa][Mm][Ee]=") and nodes then
			local n = hostlist_count(nodes)
			if n == nil then
				f:close()
				return nil, string.format("%s:%d: cannot read Nodes=%s", path, lineno,
					nodes)
			end
			sizes[#sizes + 1] = n
		end
	end
	f:close()
	if #sizes == 0 then
		return nil, path .. " names no leaf switch (SwitchName=... Nodes=...)"
	end
	table.sort(sizes, function(a, b) return a > b end)
	return sizes, nil
end

-- Fewest leaves holding n nodes, the largest first; nil when the tree is smaller.
local function fewest_leaves(sizes, n)
	local have = 0
	for k, size in ipairs(sizes) do
		have = have + size
		if have >= n then
			return k
		end
	end
	return nil
end

-- Leaf sizes for this run of slurmctld (nil: LEAF_NODES, or change no job).
local LEAVES, WHY = read_leaves(topology_path())
if LEAVES == nil and LEAF_NODES ~= nil then
	slurm.log_info("dtplan: %s; using LEAF_NODES=%d", WHY, LEAF_NODES)
elseif LEAVES == nil then
	slurm.log_info("dtplan: %s; jobs keep their own --switches", WHY)
end

-- Returns the --dt-plan value ("" when bare), or nil when not given.
local function dt_plan_value(job_desc)
	local env = job_desc.spank_job_env
	if env ~= nil then
		for _, entry in pairs(env) do
			local value = string.match(entry, "^" .. OPTION .. "=(.*)$")
			if value ~= nil then
				return value
			end
		end
	end
	if job_desc.script ~= nil and job_desc.environment ~= nil then
		return job_desc.environment["SLURM_SPANK_" .. OPTION]
	end
	return nil
end

-- A node count as given, or nil when unset.
local function count(n)
	if n == nil or n == slurm.NO_VAL or n == 0 then
		return nil
	end
	return n
end

-- Leaves for n nodes: from the tree, else from LEAF_NODES; nil: none.
local function leaves_for(n)
	if LEAVES ~= nil then
		return fewest_leaves(LEAVES, n)
	elseif LEAF_NODES ~= nil then
		return math.floor((n + LEAF_NODES - 1) / LEAF_NODES)
	end
	return nil
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	local plan = dt_plan_value(job_desc)
	if plan == nil or plan == "off" then
		return slurm.SUCCESS
	end
	if count(job_desc.req_switch) ~= nil then
		return slurm.SUCCESS -- the user chose --switches
	end
	local nodes = count(job_desc.max_nodes) or count(job_desc.min_nodes)
	if nodes == nil then
		return slurm.SUCCESS -- unknown at submission: the plan will say
	end
	local k = leaves_for(nodes)
	if k == nil then
		return slurm.SUCCESS -- no tree, or more nodes than it holds
	end
	job_desc.req_switch = k
	job_desc.wait4switch = WAIT4SWITCH
	slurm.log_info("dtplan: job of uid %u with --dt-plan on %d node(s): --switches=%d@%ds",
		submit_uid, nodes, k, WAIT4SWITCH)
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

slurm.log_info("dtplan: job_submit.lua loaded")
return slurm.SUCCESS
