#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_cycles.sh [DIR...]: no cycle among the objects of a folder.
#
# For each folder (relative to the build tree: lib, plugin, probes, cli,
# serve) it reads the global symbols of the folder's objects with nm, draws
# an edge A -> B when object A uses a symbol that object B defines, and fails
# when an object reaches itself through others: it prints each cycle with the
# symbol behind every step.  Symbols from outside the folder do not count.
#
# The folders come from the arguments, else from $CHECK_CYCLES_DIRS (set by
# make check), else all five.  Objects are found as DIR/*.o and
# DIR/.libs/*.o; automake's per-target prefix ("libdtplan_la-") is dropped,
# an object whose source DIR/NAME.c is gone is left out, and of two objects
# from one source (a library's and a test's) the newer is read.
#
# Exit status: 0 no cycle, 1 a cycle, 77 (skip) without nm or when a folder
# has no objects (not built, or the plugin without Slurm).
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
NM="${NM:-nm}"

if ! command -v "$NM" >/dev/null 2>&1; then
	echo "SKIP: $NM not found"
	exit 77
fi
[ $# -gt 0 ] || set -- ${CHECK_CYCLES_DIRS:-lib plugin probes cli serve}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
status=0 skipped=0

for dir in "$@"; do
	# one object per source, the newest (ls -t), named after the source
	objs=$(cd "$top_builddir" 2>/dev/null && ls -t "$dir"/*.o "$dir"/.libs/*.o 2>/dev/null)
	: >"$tmp"
	seen=" " n=0
	for o in $objs; do
		base=${o##*/}
		stem=${base%.o}
		stem=${stem##*-}
		case "$seen" in *" $stem "*) continue ;; esac
		[ -f "$top_srcdir/$dir/$stem.c" ] || continue
		seen="$seen$stem "
		n=$((n + 1))
		"$NM" -P -g "$top_builddir/$o" 2>/dev/null |
			awk -v obj="$dir/$stem.o" '
				$2 == "U" || $2 == "w" { print obj, "use", $1; next }
				$2 ~ /^[TDBRCVWGS]$/ { print obj, "def", $1 }' >>"$tmp"
	done
	if [ "$n" -eq 0 ]; then
		echo "SKIP: no objects in $top_builddir/$dir (not built?)"
		skipped=1
		continue
	fi
	if awk '
		$2 == "def" { def[$3] = def[$3] " " $1; node[$1] = 1; next }
		$2 == "use" { use[++nu] = $1 SUBSEP $3; node[$1] = 1 }
		END {
			for (o in node)
				name[++n] = o
			# sort the names so that the report does not depend on awk
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && name[j - 1] > name[j]; j--) {
					t = name[j]; name[j] = name[j - 1]; name[j - 1] = t
				}
			for (i = 1; i <= n; i++)
				ix[name[i]] = i
			# edges a -> b with one symbol each
			for (k = 1; k <= nu; k++) {
				split(use[k], p, SUBSEP)
				m = split(def[p[2]], d, " ")
				for (q = 1; q <= m; q++) {
					a = ix[p[1]]; b = ix[d[q]]
					if (a == b || ((a, b) in sym))
						continue
					sym[a, b] = p[2]
					reach[a, b] = 1
				}
			}
			# transitive closure (Warshall): a handful of objects per folder
			for (k = 1; k <= n; k++)
				for (i = 1; i <= n; i++)
					if ((i, k) in reach)
						for (j = 1; j <= n; j++)
							if ((k, j) in reach)
								reach[i, j] = 1
			bad = 0
			for (i = 1; i <= n; i++) {
				if (done[i] || !((i, i) in reach))
					continue
				# i lies on a cycle: its component, then one cycle through it
				members = ""
				for (j = 1; j <= n; j++)
					if (j == i || (((i, j) in reach) && ((j, i) in reach))) {
						done[j] = i
						members = members " " name[j]
					}
				delete from
				delete queue
				qh = 1; qt = 1; queue[1] = i; from[i] = 0; found = 0
				while (qh <= qt && !found) {
					a = queue[qh++]
					for (b = 1; b <= n; b++) {
						if (!((a, b) in sym))
							continue
						if (b == i) { last = a; found = 1; break }
						if (!(b in from) && ((b, i) in reach)) {
							from[b] = a; queue[++qt] = b
						}
					}
				}
				path = name[i] " (" sym[last, i] ")"
				for (b = last; b != i; b = from[b])
					path = name[b] " (" sym[from[b], b] ") -> " path
				printf "cycle among%s:\n  %s -> %s\n", members, name[i], path
				# and every use between them, for whoever breaks it
				for (a = 1; a <= n; a++)
					for (b = 1; b <= n; b++)
						if (((a, b) in sym) && done[a] == i && done[b] == i)
							printf "  uses: %s -> %s (%s)\n", name[a], name[b], sym[a, b]
				bad = 1
			}
			exit bad
		}' "$tmp"; then
		echo "ok - $dir: $n objects, no cycle"
	else
		echo "not ok - $dir: objects use each other in a cycle (see above)"
		status=1
	fi
done
if [ "$status" -eq 0 ] && [ "$skipped" -eq 1 ]; then
	exit 77
fi
exit "$status"
