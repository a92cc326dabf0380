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
