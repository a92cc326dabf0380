#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan against published training runs (tests/data/reference-runs.json):
# every row gets a plan, and the agreement stays at or above the thresholds
# tests/reference_table.py sets (doc/internals/cost-model.md, "Reference
# runs"); the calibrated constants, fitted again by tests/calibrate.py,
# predict each source's rows from the others' (leave one source out) at or
# above its thresholds ("Calibration").  The tables they print are the
# test's log.
. "$(dirname "$0")/lib.sh"
if ! command -v python3 >/dev/null 2>&1; then
	echo "skip: no python3"
	exit 77
fi
if DTPLAN="$DTPLAN" python3 "$top_srcdir/tests/reference_table.py" --check \
	--table "$top_srcdir/tests/data/reference-runs.json" >"$out" 2>"$err"; then
	sed 's/^/# /' "$out"
	_pass "reference runs: every row planned, agreement at or above the thresholds"
else
	_fail "reference runs: $(grep '^FAIL' "$out" | head -3 | tr '\n' ' ')"
fi
if DTPLAN="$DTPLAN" python3 "$top_srcdir/tests/calibrate.py" --check \
	--table "$top_srcdir/tests/data/reference-runs.json" >"$out" 2>"$err"; then
	sed 's/^/# /' "$out"
	_pass "calibration: out of sample (leave one source out) at or above the thresholds"
else
	_fail "calibration: $(grep '^FAIL' "$out" | head -3 | tr '\n' ' ') $(tail -1 "$err")"
fi
finish
