# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cli/lib.sh: helpers for the CLI tests, sourced by tests/cli/test_*.sh.
#
# Each test script runs dtplan with arguments and checks the exit status,
# what it prints, or the whole output against a golden file in
# tests/cli/golden/.  DTPLAN_UPDATE_GOLDEN=1 rewrites golden files.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
DTPLAN="${DTPLAN:-$top_builddir/cli/dtplan}"
GOLDEN_DIR="$top_srcdir/tests/cli/golden"
out=$(mktemp) err=$(mktemp)
trap 'rm -rf "$out" "$err" "$out.state"' EXIT
# no test reads the records of earlier jobs of whoever runs it
XDG_STATE_HOME="$out.state"
export XDG_STATE_HOME
n_pass=0 n_fail=0

_fail() {
	n_fail=$((n_fail + 1))
	printf 'not ok - %s\n' "$1"
	[ -s "$out" ] && sed 's/^/#   stdout: /' "$out" | head -20
	[ -s "$err" ] && sed 's/^/#   stderr: /' "$err" | head -20
	return 0
}
_pass() { n_pass=$((n_pass + 1)); printf 'ok - %s\n' "$1"; }

# run STATUS ARGS...: runs dtplan ARGS, expects exit STATUS.
run() {
	want=$1; shift
	"$DTPLAN" "$@" >"$out" 2>"$err"; got=$?
	if [ "$got" -ne "$want" ]; then
		_fail "dtplan $* exited $got, expected $want"; return 1
	fi
	_pass "dtplan $* exits $want"
}

# stdout_has TEXT / stderr_has TEXT: fixed-string search in the last run.
stdout_has() { if grep -qF -- "$1" "$out"; then _pass "stdout has '$1'"; else _fail "stdout lacks '$1'"; fi; }
stdout_lacks() { if grep -qF -- "$1" "$out"; then _fail "stdout has '$1'"; else _pass "stdout lacks '$1'"; fi; }
stderr_has() { if grep -qF -- "$1" "$err"; then _pass "stderr has '$1'"; else _fail "stderr lacks '$1'"; fi; }
stdout_starts() {
	if [ "$(head -c ${#1} "$out")" = "$1" ]; then _pass "stdout starts '$1'"; else _fail "stdout does not start with '$1'"; fi
}

# json_eq EXPR VALUE: evaluates a python expression on the parsed stdout
# (bound to j) and compares its str() with VALUE.
json_eq() {
	got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$out" "$1" 2>&1)
	if [ "$got" = "$2" ]; then _pass "json $1 == $2"; else _fail "json $1 is '$got', expected '$2'"; fi
}

# golden NAME: compares stdout with tests/cli/golden/NAME.
golden() {
	if [ "${DTPLAN_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$GOLDEN_DIR" && cp "$out" "$GOLDEN_DIR/$1"
		_pass "golden $1 updated"; return 0
	fi
	if diff -u "$GOLDEN_DIR/$1" "$out" >/dev/null 2>&1; then _pass "golden $1"
	else diff -u "$GOLDEN_DIR/$1" "$out" | head -30 | sed 's/^/#   /'; _fail "golden $1 differs"; fi
}

# golden_json NAME: compares stdout, parsed as JSON, with tests/cli/golden/NAME: the same
# keys in the same order, integers as integers, equal strings and integers, other numbers
# within a relative 1e-9 (the last digits of a real may differ between libm builds).
golden_json() {
	if [ "${DTPLAN_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$GOLDEN_DIR" && cp "$out" "$GOLDEN_DIR/$1"
		_pass "golden $1 updated"; return 0
	fi
	if python3 - "$GOLDEN_DIR/$1" "$out" <<'EOF_PY'
import json, math, sys

def diff(a, b, at):
    if type(a) is not type(b):
        return "%s: %s in the golden file, %s now" % (at, type(a).__name__, type(b).__name__)
    if isinstance(a, dict):
        if list(a) != list(b):
            return "%s: keys %s in the golden file, %s now" % (at, list(a), list(b))
        return next((d for d in (diff(a[k], b[k], at + "." + k) for k in a) if d), None)
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items in the golden file, %d now" % (at, len(a), len(b))
        return next((d for d in (diff(x, y, "%s[%d]" % (at, i))
                                 for i, (x, y) in enumerate(zip(a, b))) if d), None)
    if isinstance(a, float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300):
        return None
    return None if a == b else "%s: %r in the golden file, %r now" % (at, a, b)

with open(sys.argv[1]) as f:
    golden = json.load(f)
with open(sys.argv[2]) as f:
    d = diff(golden, json.load(f), "")
if d:
    print("#   " + d)
sys.exit(1 if d else 0)
EOF_PY
	then _pass "golden $1"; else _fail "golden $1 differs"; fi
}

# finish: prints the summary line and exits non-zero on any failure.
finish() {
	printf '%d passed, %d failed\n' "$n_pass" "$n_fail"
	[ "$n_fail" -eq 0 ]
}

# ---- the frameworks' own checks (test_megatron_validate.sh, ...) ----------
# Each runs a framework's code from its source tree over a sweep of plans;
# without the tree, or a Python that can import what it needs, it skips.

# fw_source VAR FILE NAME: $fw_dir, the tree that $VAR names, or a skip
# when it holds no FILE.
fw_source() {
	eval "fw_dir=\${$1:-}"
	if [ -z "$fw_dir" ] || [ ! -f "$fw_dir/$2" ]; then
		echo "SKIP: $1 names no $3 source tree"
		exit 77
	fi
}

# fw_python CODE WHAT: $py, the first of $DTPLAN_PYTHON, python3 and
# /usr/bin/python3 that runs CODE, or a skip naming WHAT it lacks.
fw_python() {
	py=
	for p in ${DTPLAN_PYTHON:-} python3 /usr/bin/python3; do
		if "$p" -c "$1" 2>/dev/null; then
			py=$p
			return 0
		fi
	done
	echo "SKIP: no Python with $2"
	exit 77
}

# fw_sweep [-k KEY]: starts a sweep in $plans (removed at exit).
# fw_plan ARGS...: one plan of it, kept (and named in $plans/index) when it
# plans and, with fw_sweep -k, its JSON has KEY (a hand-off the framework
# can take).
fw_sweep() {
	fw_key=
	[ "${1:-}" = -k ] && fw_key=$2
	plans=$(mktemp -d)
	trap 'rm -rf "$out" "$err" "$out.state" "$plans"' EXIT
	n=0
}

fw_plan() {
	n=$((n + 1))
	if "$DTPLAN" plan "$@" --json >"$plans/$n.json" 2>"$err" &&
		{ [ -z "$fw_key" ] || grep -q "\"$fw_key\": \"" "$plans/$n.json"; }; then
		echo "$n: $*" >>"$plans/index"
	else
		rm -f "$plans/$n.json"
	fi
}

# fw_count MIN: at least MIN plans in the sweep.
fw_count() {
	fw_n=$(wc -l <"$plans/index")
	if [ "$fw_n" -ge "$1" ]; then _pass "$fw_n plans in the sweep"
	else _fail "only $fw_n plans in the sweep"; fi
}

# fw_check WHAT CHECK ARGS...: the framework's check (a Python script) on
# every plan of the sweep, after ARGS (its source trees); a failure names
# each plan it refused with the dtplan arguments that made it.
fw_check() {
	fw_what=$1 fw_script=$2
	shift 2
	# shellcheck disable=SC2046 # one file name a word
	if "$py" "$fw_script" "$@" $(ls "$plans"/*.json) >"$out" 2>"$err"; then
		_pass "$fw_what: $(tail -1 "$out")"
	else
		grep FAIL "$out" | while read -r _ f why; do
			f=${f%:}
			echo "#   $(grep "^$(basename "$f" .json): " "$plans/index") -> $why"
		done
		_fail "$fw_what: $(tail -1 "$out")"
	fi
}
