#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_warnings.sh: every warning code dtplan makes is in the one
# warnings table (lib/plan/warnings.c, warning_kinds[]), which says which
# codes refuse a job.
#
# Reads the codes made in lib/, probes/, plugin/ and cli/: the literal
# second argument of dtplan_plan_add_warning() and the codes
# lib/plan/plan.c writes into its GPU note.  A code made and missing from
# the table, or in the table and made nowhere, fails.
#
# Exit status: 0 the table is whole, 1 it is not.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 1

table=lib/plan/warnings.c
made=$(for f in lib/*/*.c probes/*.c plugin/*.c cli/*.c; do
	# join each file into one line so that a call split over lines matches
	tr '\n' ' ' <"$f" |
		grep -o 'dtplan_plan_add_warning([[:space:]]*[a-z_>.-]*,[[:space:]]*"[a-z0-9-]*"' |
		sed 's/.*"\([a-z0-9-]*\)"$/\1/'
	grep -o 'snprintf(note->code, sizeof(note->code), "[a-z0-9-]*")' "$f" |
		sed 's/.*"\([a-z0-9-]*\)")$/\1/'
done | sort -u)
listed=$(sed -n '/^} warning_kinds\[\] = {/,/^};/p; /warning_kinds\[\] = {/,/^};/p' "$table" |
	grep -o '{"[a-z0-9-]*", \(true\|false\)}' | sed 's/{"\([a-z0-9-]*\)".*/\1/' | sort -u)

status=0
for c in $made; do
	echo "$listed" | grep -qx "$c" || {
		echo "not ok - warning '$c' is made but not in $table's warning_kinds[]"
		status=1
	}
done
for c in $listed; do
	echo "$made" | grep -qx "$c" || {
		echo "not ok - warning '$c' is in $table's warning_kinds[] but made nowhere"
		status=1
	}
done
[ -n "$made" ] || { echo "not ok - no warning code found (the pattern is stale)"; status=1; }
[ $status -eq 0 ] && echo "ok - $(echo "$made" | wc -l) warning codes, each in the one table"
exit $status
