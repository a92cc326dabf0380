#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The option layer every command shares (cli/options.c): --help, bad and
# abbreviated flags, --flag=value, "--", leftover arguments, repeats and
# the site file read before the flags that override it.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"

for c in plan ledger pipeline comm ckpt node check-config report fabric version help; do
	run 0 "$c" --help; stdout_starts "Usage: dtplan $c"
	run 0 "$c" -h; stdout_starts "Usage: dtplan $c"
	# --help wins over a bad flag before it, and prints nothing on stderr
	run 0 "$c" --bogus --help; stdout_starts "Usage: dtplan $c"
	if [ -s "$err" ]; then _fail "$c --help wrote on stderr"; else _pass "$c --help: stderr empty"; fi
	run 2 "$c" --bogus; stderr_has "dtplan $c: unknown option '--bogus'"
	stderr_has "Try 'dtplan help $c' for more information."
	if [ -s "$out" ]; then _fail "$c --bogus wrote on stdout"; else _pass "$c --bogus: stdout empty"; fi
	run 2 "$c" -x; stderr_has "dtplan $c: unknown option '-x'"
done

# A flag's value is not taken for --help: --model gets "-h", which is no model.
run 2 ledger --gpus 8 --model -h; stderr_has "unknown model '-h'"
# After "--" everything is an argument, --help too.
run 2 ledger --model 7B --gpus 8 -- --help; stderr_has "unexpected argument '--help'"

# --flag=value and unambiguous prefixes; an ambiguous prefix is unknown.
run 0 ckpt --gpus=8 --mtbf-gpu-hours=1000 --write-seconds=60s --json
json_eq "j['gpus'], j['write_seconds']" "(8, 60)"
run 0 ledger --mod 7B --gp 8 --ze 3 --se 0 --js
json_eq "j['bytes_per_gpu']['total']" 14000000000
run 2 plan --model 7B --gp 8; stderr_has "unknown option '--gp'"
run 2 ledger --model 7B --gpus 8 --json=yes; stderr_has "unknown option '--json=yes'"

# Required flags are named in the order of the usage.
run 2 comm; stderr_has "--op is required"
run 2 ckpt --write-seconds 60; stderr_has "--gpus is required"

# Operands: help takes one, version none.
run 0 help ckpt; stdout_starts "Usage: dtplan ckpt"
run 2 help ckpt comm; stderr_has "dtplan help: unexpected argument 'comm'"
run 2 version now; stderr_has "dtplan version: unexpected argument 'now'"
run 2 check-config "$data/dtplan-full.conf"; stderr_has "unexpected argument '$data/dtplan-full.conf'"

# check-config takes each file once, in either spelling.
run 0 check-config --site="$data/dtplan-full.conf"; stdout_has "site: $data/dtplan-full.conf"
run 2 check-config --args "policy=warn" --args "policy=deny"; stderr_has "--args given twice"
run 2 check-config --topology=a --topology b; stderr_has "--topology given twice"

# plan reads --site before every other flag: --gpu overrides the site's
# GpuType=h100-sxm wherever it stands on the line.
run 0 plan --model 7B --gpus 8 --site "$data/dtplan-full.conf" --json
json_eq "j['gpu']['name']" h100-sxm
run 0 plan --model 7B --gpus 8 --gpu a100-80gb --site "$data/dtplan-full.conf" --json
json_eq "j['gpu']['name']" a100-80gb
# a bad site file is reported before a bad flag, and --help before both
run 1 plan --model 7B --gpus 8 --bogus --site "$data/no-such-site.conf"; stderr_has "no-such-site.conf"
run 0 plan --bogus --site "$data/no-such-site.conf" --help; stdout_starts "Usage: dtplan plan"
finish
