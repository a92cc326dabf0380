#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz/run.sh: builds the libFuzzer harnesses (fuzz/fuzz_*.c) with clang,
# AddressSanitizer and UBSan, and runs each for a bounded time on a copy of
# its seed corpus (tests/fuzz/corpus/NAME) and its regressions.  Fails on a
# crash, a hang (-timeout) or a memory blowup (-rss_limit_mb), and says
# where the input is.  Run by `make fuzz` (FUZZ_SECONDS each, default 60)
# and by .ci/run (a few seconds each).
#
# -m BYTES is every harness's -max_len (default 65536: small inputs mutate
# quickly).  -M BYTES runs the harnesses that have big inputs (topology,
# fabric, report) with that -max_len instead and with those inputs in their
# corpus: bench/bench_parse --write makes them (a YAML mapping of 400,000
# keys, a flow list of a million items, fabric JSON of 200,000 switches,
# topology.conf of 200,000 leaves, a plan of 8 million values), which the
# 64 KB cap never reaches.
#
# Usage: fuzz/run.sh [-s SECONDS] [-b BUILDDIR] [-j JOBS] [-m BYTES] [-M BYTES] [NAME...]
#
# Environment: FUZZ_CC (default clang), top_srcdir (default: this script's
# parent), top_builddir (where config.h is; default top_srcdir).
set -eu

seconds=60
jobs=2
max_len=65536
big_len=
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
build=$top_builddir/fuzz-build
cc=${FUZZ_CC:-clang}

while getopts s:b:j:m:M: o; do
	case $o in
	s) seconds=$OPTARG ;;
	b) build=$OPTARG ;;
	j) jobs=$OPTARG ;;
	m) max_len=$OPTARG ;;
	M) big_len=$OPTARG ;;
	*) echo "usage: $0 [-s SECONDS] [-b BUILDDIR] [-j JOBS] [-m BYTES] [-M BYTES] [NAME...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

if [ $# -gt 0 ]; then
	names=$*
else
	names=$(cd "$top_srcdir/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi

# Instrumented for coverage and both sanitizers; the harness link adds
# libFuzzer's main.  Warnings are shown, not fatal: clang's set differs from
# the project compiler's, which builds these same files with -Werror.
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-g -O1 $san -Wall -Wextra -Wno-unused-parameter -DDTPLAN_LIBFUZZER"
cflags="$cflags -I$top_builddir -I$top_srcdir/lib -I$top_srcdir/probes -I$top_srcdir/serve -I$top_srcdir/fuzz"
cflags="$cflags $(pkg-config --cflags hwloc jansson libcurl sqlite3 yaml-0.1 libmicrohttpd) -pthread"
# probes/auth.c speaks to munged (libmunge has no .pc file everywhere).
libs="$(pkg-config --libs hwloc jansson libcurl sqlite3 yaml-0.1 libmicrohttpd) -lmunge -pthread -lm -ldl"

mkdir -p "$build/obj" "$build/bin"
echo "fuzz: building with $cc in $build"
# A changed header (or configuration) rebuilds every object.
if [ -n "$(find "$top_srcdir/lib" "$top_srcdir/probes" "$top_srcdir/serve" "$top_builddir/config.h" \
	-name '*.h' -newer "$build/obj/.stamp" 2>/dev/null | head -1)" ] ||
	[ ! -e "$build/obj/.stamp" ]; then
	rm -f "$build"/obj/*.o
	touch "$build/obj/.stamp"
fi
# The library sources once (fuzzer-no-link: coverage without libFuzzer's main).
for src in "$top_srcdir"/lib/*/*.c "$top_srcdir"/probes/*.c "$top_srcdir"/serve/*.c; do
	echo "$src"
done | xargs -P "$jobs" -I{} sh -c '
	o="$1/obj/$(basename "$(dirname "{}")")_$(basename "{}" .c).o"
	[ "$o" -nt "{}" ] && exit 0
	$2 $3 -fsanitize=fuzzer-no-link -c "{}" -o "$o"
' sh "$build" "$cc" "$cflags"
for name in $names; do
	$cc $cflags -fsanitize=fuzzer "$top_srcdir/fuzz/fuzz_$name.c" "$build"/obj/*.o $libs \
		-o "$build/bin/fuzz_$name"
done

# A child that a sanitizer stops exits 86 (fuzz_hwloc_xml.c looks for it);
# hwloc's own complaints about malformed XML are not news.
ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86:print_stacktrace=1:halt_on_error=1}
HWLOC_HIDE_ERRORS=2
export ASAN_OPTIONS UBSAN_OPTIONS HWLOC_HIDE_ERRORS

# The big inputs, made by the project's own build of bench_parse.
big=
if [ -n "$big_len" ]; then
	big=$build/big
	"$top_builddir/bench/bench_parse" --write "$big" >/dev/null ||
		{ echo "fuzz: -M needs bench/bench_parse built (make)" >&2; exit 2; }
fi

failed=
for name in $names; do
	work=$build/corpus/$name
	mkdir -p "$work" "$build/artifacts"
	seeds=$top_srcdir/tests/fuzz/corpus/$name
	regressions=$top_srcdir/tests/fuzz/regressions/$name
	[ -d "$regressions" ] || regressions=
	len=$max_len extra=
	if [ -n "$big" ] && [ -d "$big/$name" ]; then
		len=$big_len extra=$big/$name
	fi
	log=$build/$name.log
	printf 'fuzz: %-13s %ss ... ' "$name" "$seconds"
	# -timeout: one input; -rss_limit_mb: the whole process; -max_len: -m, or
	# -M for the harnesses with big inputs.
	# shellcheck disable=SC2086
	if "$build/bin/fuzz_$name" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
		-max_len="$len" -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
		"$work" "$seeds" $regressions $extra >"$log" 2>&1; then
		sed -n 's/^stat::number_of_executed_units: */runs /p' "$log" | tr '\n' ' '
		echo ok
	else
		echo FAILED
		grep -E 'ERROR|SUMMARY|Test unit written|timeout|out-of-memory' "$log" | head -20
		echo "fuzz: $name failed; the input is in $build/artifacts/ (log: $log)."
		echo "fuzz: once fixed, add it to tests/fuzz/regressions/$name/ so make check replays it."
		failed="$failed $name"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed"
	exit 1
fi
echo "fuzz: every harness ran ${seconds}s without a crash, hang or memory blowup"
