--[[
 job_submit.lua: keep dtplan jobs inside one leaf switch when they fit.

 For Slurm's job_submit/lua plugin (JobSubmitPlugins=lua in slurm.conf;
 the file lives beside slurm.conf).  A job that asks for a dtplan plan
 (sbatch --dt-plan, --dt-plan=auto or =strict) and for no more nodes than one
 leaf switch holds gets --switches=1@WAIT4SWITCH: the scheduler then prefers
 an allocation under a single leaf, where data-parallel all-reduce never
 crosses an oversubscribed uplink, and gives up waiting for one after
 WAIT4SWITCH seconds.  A job that chose --switches itself is left alone.

 How the option is seen here (Slurm 22.05): sbatch/salloc/srun send SPANK
 option values in the job's spank_job_env as
 "_SLURM_SPANK_OPTION_dtplan_dt_plan=<value>" (empty for a bare --dt-plan);
 the job later sees them as SLURM_SPANK__SLURM_SPANK_OPTION_dtplan_dt_plan.
 For batch jobs the submit environment is checked too.
--]]

-- Nodes under one leaf switch at this site (topology.conf), and how long a
-- job may wait for an allocation under one leaf.
local LEAF_NODES = 4
local WAIT4SWITCH = 600 -- seconds

local OPTION = "_SLURM_SPANK_OPTION_dtplan_dt_plan"

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

function slurm_job_submit(job_desc, part_list, submit_uid)
	local plan = dt_plan_value(job_desc)
	if plan == nil or plan == "off" then
		return slurm.SUCCESS
	end
	if count(job_desc.req_switch) ~= nil then
		return slurm.SUCCESS -- the user chose --switches
	end
	local nodes = count(job_desc.max_nodes) or count(job_desc.min_nodes)
	if nodes == nil or nodes > LEAF_NODES then
		return slurm.SUCCESS -- unknown or larger than a leaf: the plan will say
	end
	job_desc.req_switch = 1
	job_desc.wait4switch = WAIT4SWITCH
	slurm.log_info("dtplan: job of uid %u with --dt-plan on %d node(s): --switches=1@%ds",
		submit_uid, nodes, WAIT4SWITCH)
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

slurm.log_info("dtplan: job_submit.lua loaded")
return slurm.SUCCESS
