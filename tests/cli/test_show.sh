#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan show: a saved plan shows as dtplan plan showed it, text and picture.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

# same_file NAME A B: passes when A and B are byte for byte the same.
same_file() {
	if cmp -s "$2" "$3"; then _pass "$1"; else diff -u "$2" "$3" | head -20 | sed 's/^/#   /'; _fail "$1"; fi
}

# show_case NAME ARGS...: dtplan plan ARGS (text and --svg, then --json),
# then dtplan show of the JSON gives the same text and the same picture.
show_case() {
	name=$1
	shift
	run 0 plan "$@" --svg "$tmp/$name.plan.svg" && cp "$out" "$tmp/$name.plan.txt"
	run 0 plan "$@" --json && cp "$out" "$tmp/$name.json"
	run 0 show "$tmp/$name.json" --svg "$tmp/$name.show.svg"
	same_file "$name: dtplan show prints what dtplan plan printed" "$tmp/$name.plan.txt" "$out"
	same_file "$name: --svg draws the same picture" "$tmp/$name.plan.svg" "$tmp/$name.show.svg"
}

# No allocation; a tree with allocation warnings; blocks.
show_case flat --model llama3-70b --gpus 128
show_case tree --model 7B --global-batch 64 --nodes 'gpu[01-04,09-12]' \
	--topology "$data/topology-three-leaves.conf" --site "$data/dtplan-thin-three-leaves.conf" \
	--node-xml "gpu01=$xml"
stdout_has "[too-many-leaves] the 8 nodes span 2 leaf switches"
show_case blocks --model 7B --global-batch 64 --nodes 'gb[01,05,09]' \
	--topology "$data/topology-blocks.conf" --site "$data/dtplan-thin-blocks.conf" \
	--node-xml "gb01=$xml"
stdout_has "; 3 blocks used, 1 needed"

# Usage and bad files: --help, no file, not a plan, not JSON, missing.
run 0 show --help
stdout_starts "Usage: dtplan show PLAN.json"
run 2 show
stderr_has "dtplan show: no plan file given"
run 2 show "$tmp/flat.json" "$tmp/tree.json"
run 2 show --nosuch "$tmp/flat.json"
stderr_has "unknown option '--nosuch'"
printf '{"parallelism": {"tp": 1, "pp": 1, "dp": 1}}\n' >"$tmp/ranks-only.json"
run 2 show "$tmp/ranks-only.json"
stderr_has "$tmp/ranks-only.json: schema is not dtplan.plan/1"
printf 'not json\n' >"$tmp/garbage.json"
run 2 show "$tmp/garbage.json"
stderr_has "$tmp/garbage.json:1:"
run 1 show "$tmp/missing.json"
stderr_has "missing.json"
run 1 show "$tmp/flat.json" --svg "$tmp/no/such/dir/p.svg"
stderr_has "--svg: cannot write '$tmp/no/such/dir/p.svg'"

finish
