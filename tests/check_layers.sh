#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_layers.sh: libdtplan's areas only use the areas below them.
#
# lib/ has one folder per area, in this order from the bottom up (the
# order of doc/internals/map.md):
#
#   base model topology site cost fabric measure plan record launch json
#
# Two checks, each printing every offence:
#
#   1. Symbols: an object of lib/A/ that uses a symbol an object of lib/B/
#      defines needs B at or below A (nm over the built objects).
#   2. Includes: a file of lib/A/ includes the internal header B/B.h of an
#      area B at or below A only, and an area's B/*_int.h only from B
#      itself; libdtprobes (probes/) includes base/base.h and no other
#      internal header, and plugin/, cli/ and serve/ none (they use the
#      public dtplan.h and dtplan/*.h).
#   3. The collector (serve/, libdtserve): its serve_int.h is included
#      from serve/ only and its serve.h from serve/ and cli/ (the command)
#      only; serve/ includes nothing of cli/, and its objects use no symbol
#      that an object of cli/ defines (nm).
#
# Exit status: 0 the order holds, 1 it does not, 77 (skip) without nm or
# when lib/ is not built.
set -u

LAYERS="base model topology site cost fabric measure plan record launch json"

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
NM="${NM:-nm}"

rank() {
	r=0
	for l in $LAYERS; do
		[ "$l" = "$1" ] && { echo "$r"; return; }
		r=$((r + 1))
	done
	echo -1
}

status=0

# 2. includes (the sources alone: no build needed)
for f in "$top_srcdir"/lib/*/*.[ch] "$top_srcdir"/probes/*.[ch] "$top_srcdir"/plugin/*.[ch] \
	"$top_srcdir"/cli/*.[ch] "$top_srcdir"/serve/*.[ch]; do
	[ -f "$f" ] || continue
	rel=${f#"$top_srcdir"/}
	top=${rel%%/*}
	case $top in
	lib)
		area=${rel#lib/}
		area=${area%%/*}
		[ "$area" = dtplan ] && continue
		;;
	*) area= ;;
	esac
	mine=$(rank "$area")
	# 3. the collector's headers, and cli/'s from serve/
	for inc in $(sed -n 's/^#include "\([a-z_/]*\.h\)".*/\1/p' "$f"); do
		why=
		case $top:${inc##*/} in
		serve:cli.h) why="serve/ uses lib/ and probes/, never cli/" ;;
		serve:*) ;;
		cli:serve.h) ;;
		*:serve.h | *:serve_int.h) why="serve/'s header, for serve/ (and serve.h for cli/) only" ;;
		esac
		if [ -n "$why" ]; then
			echo "not ok - $rel includes \"$inc\": $why"
			status=1
		fi
	done
	for inc in $(sed -n 's/^#include "\([a-z_]*\/[a-z_]*\.h\)".*/\1/p' "$f"); do
		dir=${inc%%/*}
		[ "$dir" = dtplan ] && continue
		theirs=$(rank "$dir")
		[ "$theirs" -ge 0 ] || continue
		why=
		case $inc in
		*_int.h) [ "$dir" = "$area" ] || why="$inc is internal to lib/$dir/" ;;
		*)
			if [ "$top" = lib ]; then
				[ "$theirs" -le "$mine" ] || why="lib/$dir/ is above lib/$area/"
			elif [ "$top" != probes ] || [ "$inc" != base/base.h ]; then
				why="$top/ may include base/base.h only (libdtprobes) or none"
			fi
			;;
		esac
		if [ -n "$why" ]; then
			echo "not ok - $rel includes \"$inc\": $why"
			status=1
		fi
	done
done

# 1. symbols
if ! command -v "$NM" >/dev/null 2>&1; then
	echo "SKIP: $NM not found (includes checked: $([ $status -eq 0 ] && echo ok || echo not ok))"
	[ $status -eq 0 ] && exit 77
	exit 1
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
n=0
for area in $LAYERS; do
	# one object per source, the newest, as tests/check_cycles.sh reads them
	seen=" "
	for o in $(cd "$top_builddir" 2>/dev/null && ls -t lib/"$area"/.libs/*.o lib/"$area"/*.o 2>/dev/null); do
		stem=${o##*/}
		stem=${stem%.o}
		stem=${stem##*-}
		case "$seen" in *" $stem "*) continue ;; esac
		[ -f "$top_srcdir/lib/$area/$stem.c" ] || continue
		seen="$seen$stem "
		n=$((n + 1))
		"$NM" -P -g "$top_builddir/$o" 2>/dev/null |
			awk -v obj="lib/$area/$stem.o" -v r="$(rank "$area")" '
				$2 == "U" || $2 == "w" { print r, obj, "use", $1; next }
				$2 ~ /^[TDBRCVWGS]$/ { print r, obj, "def", $1 }' >>"$tmp"
	done
done
if [ "$n" -eq 0 ]; then
	echo "SKIP: no objects under $top_builddir/lib (not built?)"
	[ $status -eq 0 ] && exit 77
	exit 1
fi
if awk '
	$3 == "def" { rk[$4] = $1; ob[$4] = $2; next }
	$3 == "use" { u[++nu] = $0 }
	END {
		bad = 0
		for (k = 1; k <= nu; k++) {
			split(u[k], p, " ")
			if (!(p[4] in rk) || rk[p[4]] <= p[1])
				continue
			printf "not ok - %s uses %s of %s, an area above its own\n", p[2], p[4], ob[p[4]]
			bad = 1
		}
		exit bad
	}' "$tmp"; then
	:
else
	status=1
fi
# 3. serve/ uses no symbol of cli/ (when both are built)
syms() { # DIR KIND: "def" or "use" symbols of DIR's objects, one object per source
	seen=" "
	for o in $(cd "$top_builddir" 2>/dev/null && ls -t "$1"/.libs/*.o "$1"/*.o 2>/dev/null); do
		stem=${o##*/}
		stem=${stem%.o}
		stem=${stem##*-}
		case "$seen" in *" $stem "*) continue ;; esac
		[ -f "$top_srcdir/$1/$stem.c" ] || continue
		seen="$seen$stem "
		"$NM" -P -g "$top_builddir/$o" 2>/dev/null | awk -v kind="$2" -v obj="$1/$stem.o" '
			kind == "use" && ($2 == "U" || $2 == "w") { print $1, obj }
			kind == "def" && $2 ~ /^[TDBRCVWGS]$/ { print $1, obj }'
	done
}
syms cli def | sort >"$tmp.def"
syms serve use | sort >"$tmp.use"
if [ -s "$tmp.def" ] && [ -s "$tmp.use" ]; then
	bad=$(join "$tmp.use" "$tmp.def")
	if [ -n "$bad" ]; then
		echo "$bad" | while read -r sym user def; do
			echo "not ok - $user uses $sym of $def: serve/ never uses cli/"
		done
		status=1
	fi
fi
rm -f "$tmp.def" "$tmp.use"
if [ $status -eq 0 ]; then
	echo "ok - lib/: $n objects in $(echo $LAYERS | wc -w) areas, every use and include points down"
	echo "ok - serve/: its headers stay in serve/ and cli/, and it uses nothing of cli/"
fi
exit $status
