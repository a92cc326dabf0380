#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run-all.sh: the one command that runs every dtplan test.
#
#   1. installs the build and test dependencies (when root),
#   2. builds with -Wall -Wextra -Werror,
#   3. runs the unit and CLI tests (make check),
#   4. runs the end-to-end tests on a local Slurm cluster (when root):
#      munge, slurmctld and 8 slurmd in network namespaces.
#
# Environment: DTPLAN_SKIP_CLUSTER=1 skips step 4.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "$(id -u)" -eq 0 ]; then
	tests/install-deps.sh
fi
tests/build.sh
make check -j"$(nproc)" || {
	# Show what failed, then fail.
	for f in $(find tests -name '*.log' ! -name 'test-suite.log'); do
		# automake's .trs says ":test-result: FAIL" (or ERROR, XPASS)
		grep -q -E '^:test-result: (FAIL|ERROR|XPASS)' "${f%.log}.trs" 2>/dev/null &&
			{ echo "== $f"; cat "$f"; }
	done
	exit 1
}
if [ "${DTPLAN_SKIP_CLUSTER:-0}" = 1 ]; then
	echo "run-all: cluster tests skipped (DTPLAN_SKIP_CLUSTER=1)"
elif [ "$(id -u)" -ne 0 ]; then
	echo "run-all: cluster tests need root (network namespaces, slurmd); skipped"
elif [ -x tests/cluster/run.sh ]; then
	tests/cluster/run.sh
fi
