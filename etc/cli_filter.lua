-- SPDX-License-Identifier: GPL-2.0-or-later
--[[
 cli_filter.lua: on a topology/block site, give a dtplan job the --segment
 that keeps its expert groups (and model-parallel groups) inside blocks.

 For Slurm's cli_filter/lua plugin (CliFilterPlugins=cli_filter/lua in
 slurm.conf; the file lives beside slurm.conf on the submit hosts).  It runs
 in sbatch, salloc and srun, as the user, on the submit host, before the job
 is sent.  A job that asks for a plan (--dt-plan, =auto or =strict, with
 --dt-model) and chose no --segment of its own, on a site whose topology
 file describes blocks (topology.conf's BlockName= lines, topology.yaml's
 block:), gets --segment=S: S from `dtplan segment` (dtplan(1)), run on the
 job's --dt-model, --dt-train, node count and GPUs per node, the largest
 number of nodes that divides the job's, fits a block and holds whole groups
 of the plan the preview at sbatch makes.  The reason is said on the user's
 terminal and handed to the plugin, which runs next in the same process: it
 puts it in the job's environment (SLURM_SPANK_DTPLAN_SEGMENT_REASON) and
 writes it into the job's log at job start.  Nothing else of the job
 changes (neither --export nor --export-file: sbatch's --export-file drops
 the submit environment, and --export=ALL,NAME=value makes slurmd load the
 user's login environment, src/sbatch/sbatch.c).

 Nothing here refuses a job: no dtplan, a timeout, output it cannot read, a
 node or GPU count unknown at submission, no blocks: the job goes as it
 is, and the terminal says why.  The user's own --segment always wins.

 Why here and not elsewhere (Slurm's source, tags slurm-24-11-5-1 and
 slurm-26-05-0-1): sbatch calls cli_filter's pre_submit
 (process_options_second_pass, src/sbatch/opt.c) before the SPANK plugin's
 init_post_opt (src/sbatch/sbatch.c), so the plugin's own preview comes too
 late to set an option; job_submit/lua can set job_desc.segment_size only
 from 26.05 (src/plugins/job_submit/lua/job_submit_lua.c), and running a
 user's model spec from slurmctld, as root, is not something to do.  Here
 options.spank.dtplan holds the plugin's option values ("set" for a bare
 flag) and options.segment is Slurm's --segment ("unset" when not given)
 (src/plugins/cli_filter/lua/cli_filter_lua.c, src/common/slurm_opt.c).
 topology/block takes a segment only when it divides the job's nodes and
 fits the base block (src/plugins/topology/block/eval_nodes_block.c), which
 dtplan's rule keeps.
--]]

-- The dtplan command (a path, or a name found in $PATH); at most TIMEOUT
-- seconds for it (timeout(1)); the topology file (nil: topology.conf, else
-- topology.yaml, beside slurm.conf); the site file dtplan reads (nil:
-- none, as the plugin's site= argument would name); GPUs per node when a
-- job does not say (nil: leave such jobs alone).
local DTPLAN = "dtplan"
local TIMEOUT = 5 -- seconds
local TOPOLOGY_FILE = nil
local SITE_FILE = nil
local GPUS_PER_NODE = nil

local PREFIX = "dtplan: "

-- The folder of slurm.conf: $SLURM_CONF's, else /etc/slurm.
local function conf_dir()
	local conf = os.getenv("SLURM_CONF")
	local dir = conf and string.match(conf, "^(.*)/[^/]*$") or "/etc/slurm"
	if dir == "" then
		dir = "/"
	end
	return dir
end

-- Whether path describes blocks: a BlockName= line in topology.conf, a
-- block: key in topology.yaml.  nil and why when it cannot be read.
local function describes_blocks(path)
	local f = io.open(path, "r")
	if f == nil then
		return nil, "cannot read " .. path
	end
	local yaml = string.match(path, "%.ya?ml$") ~= nil
	for line in f:lines() do
		line = string.gsub(line, "#.*$", "")
		if (not yaml and string.match(line, "^%s*[Bb][Ll][Oo][Cc][Kk][Nn][Aa][Mm][Ee]=")) or
			(yaml and string.match(line, "^%s*block:%s*$")) then
			f:close()
			return true, nil
		end
	end
	f:close()
	return false, path .. " describes no blocks (topology/block)"
end

-- The topology file and whether it has blocks, once per process.
local function find_topology()
	if TOPOLOGY_FILE ~= nil then
		return TOPOLOGY_FILE
	end
	local dir = conf_dir()
	local conf = dir .. "/topology.conf"
	local f = io.open(conf, "r")
	if f ~= nil then
		f:close()
		return conf
	end
	return dir .. "/topology.yaml"
end
local TOPOLOGY = find_topology()
local BLOCKS, NO_BLOCKS = describes_blocks(TOPOLOGY)

-- A value Slurm's options table holds, nil when unset.
local function opt(options, name)
	local v = options[name]
	if v == nil or v == "" or v == "unset" or v == "invalid-context" then
		return nil
	end
	return v
end

-- The job's node count when fixed ("4", not "2-4" or unset "1-0").
local function node_count(options)
	local v = opt(options, "nodes")
	if v == nil then
		return nil
	end
	local lo, hi = string.match(v, "^(%d+)%-(%d+)$")
	if lo ~= nil then
		if lo == hi then
			return tonumber(lo)
		end
		return nil
	end
	return tonumber(string.match(v, "^(%d+)$"))
end

-- GPUs per node: --gpus-per-node=[type:]N, else a gpu item of --gres
-- (gpu:N, gpu:type:N, gres/gpu:N), else --gpus over the nodes.
local function gpus_per_node(options, nodes)
	local v = opt(options, "gpus-per-node")
	if v ~= nil then
		return tonumber(string.match(v, "(%d+)$"))
	end
	v = opt(options, "gres")
	if v ~= nil then
		for item in string.gmatch(v, "[^,]+") do
			if string.match(item, "^gres/gpu") or string.match(item, "^gpu") then
				return tonumber(string.match(item, ":(%d+)$") or "1")
			end
		end
	end
	v = opt(options, "gpus")
	if v ~= nil and nodes ~= nil then
		local n = tonumber(string.match(v, "(%d+)$"))
		if n ~= nil and n % nodes == 0 then
			return math.floor(n / nodes)
		end
	end
	return GPUS_PER_NODE
end

-- One word for the shell, single-quoted.
local function quote(s)
	return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end

-- Runs dtplan segment; returns the segment (nil: none) and the reason, or
-- nil, nil and why it failed.
local function run_dtplan(model, train, gpus, per_node)
	local cmd = string.format("timeout %d %s segment --model %s --gpus %d --gpus-per-node %d " ..
		"--topology %s --json", TIMEOUT, quote(DTPLAN), quote(model), gpus, per_node,
		quote(TOPOLOGY))
	if train ~= nil then
		cmd = cmd .. " --train " .. quote(train)
	end
	if SITE_FILE ~= nil then
		cmd = cmd .. " --site " .. quote(SITE_FILE)
	end
	local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"", "r")
	if p == nil then
		return nil, nil, "cannot run " .. DTPLAN
	end
	local out = p:read("*a") or ""
	p:close()
	local rc = tonumber(string.match(out, "exit=(%d+)%s*$"))
	if rc == 124 then
		return nil, nil, string.format("%s took more than %d s", DTPLAN, TIMEOUT)
	end
	if rc ~= 0 then
		local first = string.match(out, "^([^\n]*)") or ""
		return nil, nil, string.format("%s segment failed (exit %s): %s", DTPLAN,
			tostring(rc), first)
	end
	local reason = string.match(out, '"reason":%s*"([^"]*)"')
	local seg = string.match(out, '"segment":%s*([%w]+)')
	if reason == nil or seg == nil or (seg ~= "null" and tonumber(seg) == nil) then
		return nil, nil, DTPLAN .. " segment printed no segment and reason"
	end
	return tonumber(seg), reason, nil
end

-- The reason for the plugin, which runs next in this process (its
-- init_post_opt, plugin/local.c): an anonymous temporary file, kept open
-- until the job is sent, whose text starts with DTPLAN_SEGMENT_REASON=.
-- The plugin passes it on in the job's environment and its batch step
-- writes it into the job's log.
local notes = {}

local function note_reason(offset, text)
	if notes[offset] ~= nil then
		notes[offset]:close()
		notes[offset] = nil
	end
	local f = io.tmpfile()
	if f == nil then
		return " (not in the job's log: no temporary file)"
	end
	f:write("DTPLAN_SEGMENT_REASON=" .. string.gsub(text, "\n", " ") .. "\n")
	f:flush()
	notes[offset] = f
	return ""
end

-- The message on the terminal and in the job's log.
local function say(options, offset, text)
	local where = note_reason(offset, text)
	slurm.log_info("%s%s%s", PREFIX, text, where)
end

function slurm_cli_setup_defaults(options, early)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
	local spank = options.spank
	local dt = spank and spank.dtplan
	local plan = dt and dt["dt-plan"]
	if plan == nil or plan == "off" then
		return slurm.SUCCESS
	end
	if opt(options, "segment") ~= nil then
		return slurm.SUCCESS -- the user chose --segment
	end
	if not BLOCKS then
		return slurm.SUCCESS -- a tree (or no file): --switches is job_submit.lua's
	end
	local model = dt["dt-model"]
	if model == nil or model == "set" then
		say(options, offset, "--segment not set: no --dt-model")
		return slurm.SUCCESS
	end
	local nodes = node_count(options)
	if nodes == nil then
		say(options, offset, "--segment not set: the node count is not fixed at submission " ..
			"(-N N)")
		return slurm.SUCCESS
	end
	local per_node = gpus_per_node(options, nodes)
	if per_node == nil or per_node < 1 then
		say(options, offset, "--segment not set: GPUs per node unknown at submission " ..
			"(--gpus-per-node or --gres=gpu:N)")
		return slurm.SUCCESS
	end
	local train = dt["dt-train"]
	if train == "set" then
		train = nil
	end
	local seg, reason, why = run_dtplan(model, train, nodes * per_node, per_node)
	if why ~= nil then
		say(options, offset, "--segment not set: " .. why)
		return slurm.SUCCESS
	end
	if seg ~= nil then
		options.segment = tostring(seg)
		if tonumber(opt(options, "segment")) ~= seg then
			say(options, offset, "--segment not set: Slurm did not take --segment=" ..
				tostring(seg) .. " (" .. reason .. ")")
			return slurm.SUCCESS
		end
		say(options, offset, reason .. " (set at submission)")
	else
		say(options, offset, reason)
	end
	return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
	if notes[offset] ~= nil then
		notes[offset]:close()
		notes[offset] = nil
	end
	return slurm.SUCCESS
end

if BLOCKS == nil then
	slurm.log_debug("%s%s: no --segment for any job", PREFIX, NO_BLOCKS)
end
