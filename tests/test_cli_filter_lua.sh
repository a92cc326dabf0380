#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_cli_filter_lua.sh: etc/cli_filter.lua with a fake `slurm` table and
# options as Slurm's cli_filter/lua hands them over (option values as
# strings, "unset" for an unset --segment, options.spank.dtplan for the
# plugin's), on hand-made topology files beside $SLURM_CONF, running the
# dtplan just built and stand-ins that fail.  Skipped (77) without lua.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
LUA=$(command -v lua5.3 || command -v lua) || { echo "SKIP: no lua interpreter"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Two racks of 4 nodes (blocks), and a tree.
mkdir -p "$tmp/block" "$tmp/yaml" "$tmp/tree" "$tmp/bin"
cat >"$tmp/block/topology.conf" <<'EOF'
BlockName=rack1 Nodes=node[1-4]   # a comment
BlockName=rack2 Nodes=node[5-8]
BlockSizes=4
EOF
cat >"$tmp/yaml/topology.yaml" <<'EOF'
- topology: racks
  cluster_default: true
  block:
    block_sizes: [4]
    blocks:
      - block: rack1
        nodes: node[1-4]
      - block: rack2
        nodes: node[5-8]
EOF
printf 'SwitchName=leaf1 Nodes=node[1-8]\n' >"$tmp/tree/topology.conf"
# stand-ins: too slow, and printing what is not dtplan's JSON
printf '#!/bin/sh\nsleep 10\n' >"$tmp/bin/slow"
printf '#!/bin/sh\necho hello\n' >"$tmp/bin/garbled"
chmod 755 "$tmp/bin/slow" "$tmp/bin/garbled"

# script DTPLAN TIMEOUT: the example with those settings at its top
script() {
	sed -e "s|^local DTPLAN = .*|local DTPLAN = \"$1\"|" \
		-e "s|^local TIMEOUT = .*|local TIMEOUT = $2|" \
		"$top_srcdir/etc/cli_filter.lua" >"$tmp/cli_filter.lua"
}
run() { # run DIR: the test below, with slurm.conf in DIR
	SLURM_CONF="$1/slurm.conf" "$LUA" - "$tmp/cli_filter.lua" "$1"
}

# The checks, run for each script: check(name, options, want_segment,
# want_log) where want_log is a pattern the one message must match (nil:
# no message); the anonymous file left open for the plugin holds the
# message, and is closed once the job is sent.
cat >"$tmp/lib.lua" <<'LUA'
logged = {}
slurm = {SUCCESS = 0, ERROR = -1,
	log_info = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end,
	log_debug = function() end}
-- the anonymous files the script makes, kept to read them back
notes_made = {}
local tmpfile = io.tmpfile
io.tmpfile = function()
	local f = tmpfile()
	notes_made[#notes_made + 1] = f
	return f
end
dofile(arg[1])
fails = 0
NONE = {} -- job({name = NONE}): the option unset
function job(t)
	local o = {type = "sbatch", nodes = "6", gres = "gres/gpu:8", segment = "unset",
		spank = {dtplan = {["dt-plan"] = "auto", ["dt-model"] = "mixtral-8x7b",
			["dt-train"] = "seq=4096,tp=2,pp=1,ep=8"}}}
	for k, v in pairs(t or {}) do
		if v == NONE then
			o[k] = nil
		elseif k == "spank" then
			o.spank.dtplan = v
		else
			o[k] = v
		end
	end
	return o
end
function check(name, o, want_segment, want_log)
	logged = {}
	local made = #notes_made
	local rc = slurm_cli_pre_submit(o, 0)
	local ok = rc == slurm.SUCCESS and o.segment == want_segment
	local msg = logged[1]
	local said = nil
	if want_log == nil then
		ok = ok and msg == nil and #notes_made == made
	else
		ok = ok and msg ~= nil and string.find(msg, want_log) ~= nil and #logged == 1
		-- the note for the plugin: the message, open until the job is sent
		local f = notes_made[#notes_made]
		ok = ok and #notes_made == made + 1
		if ok then
			f:seek("set")
			said = f:read("*a")
			ok = said == "DTPLAN_SEGMENT_REASON=" .. string.sub(msg, 9) .. "\n"
			slurm_cli_post_submit(0, 1234, 0)
			ok = ok and io.type(f) == "closed file"
		end
	end
	print((ok and "ok - " or "not ok - ") .. name)
	if not ok then
		print(string.format("#   rc %s segment %s", tostring(rc), tostring(o.segment)))
		print("#   log: " .. tostring(msg))
		print("#   note: " .. tostring(said))
		fails = fails + 1
	end
end
function done()
	print(fails == 0 and "# all passed" or ("# " .. fails .. " failed"))
	os.exit(fails == 0 and 0 or 1)
end
LUA

# The dtplan just built, on the blocks of topology.conf and of topology.yaml.
# Mixtral with TP 2 x EP 8 pinned: an expert group is 16 GPUs, 2 nodes of 8;
# of the multiples of 2 up to a block's 4 nodes, 2 divides the job's 6 and
# 4 does not: --segment=2.
script "$top_builddir/cli/dtplan" 30
for dir in block yaml; do
	cp "$tmp/lib.lua" "$tmp/test.lua"
	cat >>"$tmp/test.lua" <<'LUA'
local where = string.match(arg[2], "[^/]*$") .. ": "
check(where .. "expert groups of 2 nodes on blocks of 4: --segment=2", job(), "2",
	"^dtplan: %-%-segment=2: an expert group %(TP 2 x EP 8, 16 GPUs%) spans 2 nodes of 8 GPUs;.* divide the job's 6 and fit a block of 4 %(set at submission%)$")
check(where .. "--gpus-per-node=h100:8 and 8 nodes: --segment=4", job({nodes = "8-8",
	gres = "unset", ["gpus-per-node"] = "h100:8"}), "4", "^dtplan: %-%-segment=4: ")
check(where .. "--gpus=48 over 6 nodes", job({gres = NONE, gpus = "48"}), "2",
	"^dtplan: %-%-segment=2: ")
check(where .. "the user's --segment=3 stays", job({segment = "3"}), "3", nil)
check(where .. "no --dt-plan: left alone", job({spank = {}}), "unset", nil)
check(where .. "--dt-plan=off: left alone", job({spank = {["dt-plan"] = "off",
	["dt-model"] = "mixtral-8x7b"}}), "unset", nil)
check(where .. "no spank options at all", job({spank = NONE}), "unset", nil)
check(where .. "a dense model: no group to keep, none set", job({spank = {["dt-plan"] = "set",
	["dt-model"] = "llama3-8b"}}), "unset", "^dtplan: no %-%-segment: no group to keep")
check(where .. "no --dt-model", job({spank = {["dt-plan"] = "strict"}}), "unset",
	"^dtplan: %-%-segment not set: no %-%-dt%-model$")
check(where .. "a node range: unknown at submission", job({nodes = "4-6"}), "unset",
	"node count is not fixed")
check(where .. "no node count (Slurm's 1-0)", job({nodes = "1-0"}), "unset",
	"node count is not fixed")
check(where .. "no GPUs per node", job({gres = NONE}), "unset", "GPUs per node unknown")
check(where .. "a model dtplan refuses", job({spank = {["dt-plan"] = "auto",
	["dt-model"] = "no-such-model"}}), "unset",
	"^dtplan: %-%-segment not set: .* segment failed %(exit 2%): dtplan segment: ")
check(where .. "srun too", job({type = "srun"}), "2", "^dtplan: %-%-segment=2: ")
done()
LUA
	run "$tmp/$dir" <"$tmp/test.lua" || exit 1
done

# A tree: job_submit.lua's --switches, nothing here.
cp "$tmp/lib.lua" "$tmp/test.lua"
cat >>"$tmp/test.lua" <<'LUA'
check("tree: left alone, silently", job(), "unset", nil)
done()
LUA
run "$tmp/tree" <"$tmp/test.lua" || exit 1

# Failures leave the job unchanged and say why: no dtplan, too slow, output
# that is not its JSON.
for case in "$tmp/none/dtplan:1:exit 127" "$tmp/bin/slow:1:took more than 1 s" \
	"$tmp/bin/garbled:5:printed no segment and reason"; do
	cmd=${case%%:*} rest=${case#*:}
	script "$cmd" "${rest%%:*}"
	cp "$tmp/lib.lua" "$tmp/test.lua"
	printf 'check("%s: job unchanged", job(), "unset", "%s")\ndone()\n' \
		"${rest#*:}" "^dtplan: %-%-segment not set: .*${rest#*:}" >>"$tmp/test.lua"
	run "$tmp/block" <"$tmp/test.lua" || exit 1
done
