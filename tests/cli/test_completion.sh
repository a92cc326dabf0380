#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Shell completion: etc/completion/dtplan (bash) and _dtplan (zsh) are what
# `dtplan completion bash|zsh` writes from the commands' own flag tables
# (DTPLAN_UPDATE_GOLDEN=1 rewrites them), every flag of a table is in its
# command's --help, and bash with the script loaded offers the commands, a
# command's flags, the subcommand and files.
. "$(dirname "$0")/lib.sh"
dir="$top_srcdir/etc/completion"

# current SHELL FILE: `dtplan completion SHELL` is etc/completion/FILE.
current() {
	run 0 completion "$1" || return 0
	if [ "${DTPLAN_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$out" "$dir/$2"
		_pass "$dir/$2 updated"
	elif diff -u "$dir/$2" "$out" >"$err" 2>&1; then
		_pass "etc/completion/$2 is current"
	else
		_fail "etc/completion/$2 differs from 'dtplan completion $1' (DTPLAN_UPDATE_GOLDEN=1 rewrites it)"
	fi
}
current bash dtplan
current zsh _dtplan
run 2 completion fish
stderr_has "unknown shell 'fish'"
run 2 completion
run 0 completion --help
stdout_starts "Usage: dtplan completion"

# each command's flags (its table, through help --json) are in its --help
cmds=$("$DTPLAN" help --json | python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))')
for c in $cmds; do
	run 0 help "$c" --json || continue
	json_eq '[f["name"] for f in j["flags"] if "--" + f["name"] not in j["usage"]]' "[]"
done

# zsh, where there is one: the script parses, and compinit binds it to dtplan
if command -v zsh >/dev/null 2>&1; then
	if zsh -n "$dir/_dtplan" 2>"$err"; then _pass "zsh -n _dtplan"; else _fail "zsh -n _dtplan"; fi
	got=$(zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; print -r -- ${_comps[dtplan]}' \
		sh "$dir" 2>&1)
	if [ "$got" = _dtplan ]; then _pass "compinit binds _dtplan to dtplan"; else _fail "compinit: '$got'"; fi
	# zoffers "LINE" WANT: a tab after LINE in an interactive zsh gives WANT
	zoffers() {
		if zsh -f "$top_srcdir/tests/cli/zsh_complete.zsh" "$dir" "$1" "$2" >"$out" 2>"$err"; then
			_pass "zsh: $1<tab> gives '$2'"
		else
			_fail "zsh: $1<tab> does not give '$2'"
		fi
	}
	zoffers "dtplan pl" "dtplan plan"
	zoffers "dtplan plan --mo" "dtplan plan --model"
	zoffers "dtplan fabric " "dtplan fabric export"
	zoffers "dtplan help obs" "dtplan help observe"
	zoffers "dtplan check-config --js" "dtplan check-config --json"
else
	echo "# zsh not found: _dtplan is not loaded"
fi

if ! command -v bash >/dev/null 2>&1; then
	echo "# bash not found: the script is not driven"
	finish
fi
# offers "LINE" WANT...: COMPREPLY after "dtplan LINE" (the last word, empty
# when LINE ends with a blank, the one being completed) holds every WANT.
offers() {
	line=$1
	shift
	bash --norc --noprofile -c '
		. "$1" || exit 1
		read -ra COMP_WORDS <<<"dtplan $2"
		case $2 in *" " | "") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_dtplan dtplan "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' sh "$dir/dtplan" "$line" >"$out" 2>"$err"
	for w in "$@"; do
		if grep -qxF -- "$w" "$out"; then _pass "dtplan $line offers '$w'"
		else _fail "dtplan $line does not offer '$w'"; fi
	done
}
if bash --norc --noprofile -c '. "$1" && complete -p dtplan' sh "$dir/dtplan" >"$out" 2>"$err" &&
	grep -q -- "-F _dtplan dtplan" "$out"; then
	_pass "complete -p dtplan names _dtplan"
else
	_fail "complete -p dtplan does not name _dtplan"
fi
offers "" plan show check-config observe mtbf --help --version
offers "pl" plan
offers "c" check-config ckpt comm calibrate
offers "plan --mo" --model
offers "plan " --model --gpus --json --help
offers "plan --model llama2-7b --g" --gpus --gpu --gpus-per-node --global-batch
offers "show --s" --svg
offers "fabric " export
offers "fabric export --to" --topology
offers "help ob" observe
touch "$out.state.tplan.json"
offers "show $out.state.tplan" "$out.state.tplan.json"
offers "plan --site $out.state.tplan" "$out.state.tplan.json"
rm -f "$out.state.tplan.json"
finish
