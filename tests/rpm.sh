#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/rpm.sh: builds the RPM packages from make dist's tarball with
# rpmbuild -ta, as a RHEL site would (dtplan.spec), here on Debian with its
# rpm package, and lints them.
#
#   - the tarball: the one given, else make dist in the configured tree;
#   - Debian has no slurm-devel RPM (nor any -devel RPM): rpmbuild --nodeps,
#     with Debian's paths and Slurm given as the spec's macros
#     (_slurm_plugindir, slurm_version from libslurm-dev), and systemd's
#     scriptlet macros (%systemd_post...) defined as RHEL's systemd defines
#     them when this rpm has none;
#   - lints the spec (rpmspec -P parses it; rpmlint when installed: no
#     errors), then checks the packages: their names, every file each one
#     must hold, the plugin's versioned Slurm dependency and its Provides,
#     the collector's unit and scriptlets, and rpmlint on the packages (no
#     errors; warnings printed).
#
# Usage: tests/rpm.sh [TARBALL]
# Environment: DTPLAN_RPM_CHECK=1 runs the spec's %check (make check) too
# (default: skipped, rpmbuild --without check: CI runs the tests elsewhere);
# DTPLAN_RPM_KEEP=DIR keeps the built packages there.
# Exit status: 0 built and clean, 1 a failure (named), 77 rpmbuild missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

command -v rpmbuild >/dev/null || { echo "SKIP: no rpmbuild (Debian: apt-get install rpm)"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

work=$(mktemp -d /tmp/dtplan-rpm.XXXXXX)
# searchable by all: %check run as root has a test that drops to nobody and
# reads a fixture in the build tree (test_node's unreadable cache)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT

tarball=${1:-}
if [ -z "$tarball" ]; then
	[ -f Makefile ] || fail "no tarball given and $top is not configured"
	make -s dist-gzip >"$work/dist.log" 2>&1 || { tail -20 "$work/dist.log"; fail "make dist"; }
	version=$(sed -n 's/^PACKAGE_VERSION = //p' Makefile)
	tarball=$top/dtplan-$version.tar.gz
fi
[ -f "$tarball" ] || fail "$tarball not found"
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

# The spec the tarball carries (rpmbuild -ta reads that one).
spec=$work/dtplan.spec
tar -xzOf "$tarball" --wildcards '*/dtplan.spec' >"$spec" || fail "$tarball holds no dtplan.spec"
version=$(sed -n 's/^Version: *//p' "$spec")

# Debian's rpm has no systemd scriptlet macros: RHEL 8's, which run
# systemctl preset / disable --now / try-restart.
macros=$work/macros
: >"$macros"
if [ "$(rpm --eval '%{?systemd_post:1}')" != 1 ]; then
	cat >"$macros" <<'MACROS'
%systemd_requires Requires(post): systemd\
Requires(preun): systemd\
Requires(postun): systemd
%systemd_post() \
if [ $1 -eq 1 ] ; then \
	systemctl --no-reload preset %{?*} >/dev/null 2>&1 || : \
fi \
%{nil}
%systemd_preun() \
if [ $1 -eq 0 ] ; then \
	systemctl --no-reload disable --now %{?*} >/dev/null 2>&1 || : \
fi \
%{nil}
%systemd_postun_with_restart() \
if [ $1 -ge 1 ] ; then \
	systemctl try-restart %{?*} >/dev/null 2>&1 || : \
fi \
%{nil}
MACROS
fi

# The Slurm here: Debian's plugin folder and libslurm-dev's major.minor.
defs=(--define "_topdir $work/rpmbuild")
slurm_mm=
if command -v dpkg-architecture >/dev/null && dpkg-query -W libslurm-dev >/dev/null 2>&1; then
	slurm_mm=$(dpkg-query -W -f='${Version}' libslurm-dev | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
	defs+=(--define "_slurm_plugindir /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm"
		--define "slurm_version $slurm_mm")
fi
check=(--without check)
[ "${DTPLAN_RPM_CHECK:-0}" = 1 ] && check=()

# 1. The spec parses, and lints.
rpmspec --load "$macros" "${defs[@]}" -P "$spec" >"$work/spec.parsed" 2>"$work/spec.err" ||
	{ cat "$work/spec.err"; fail "rpmspec -P $spec"; }
grep -q '^%post -n dtplan-collector' "$work/spec.parsed" || fail "rpmspec: no %post for the collector"
if grep -q '%systemd_\|%{_unitdir}' "$work/spec.parsed"; then
	fail "rpmspec: a macro left unexpanded: $(grep -m1 '%systemd_\|%{_unitdir}' "$work/spec.parsed")"
fi
have_rpmlint=
if command -v rpmlint >/dev/null; then
	have_rpmlint=1
	rpmlint -c tests/rpmlint.toml "$spec" >"$work/lint-spec.log" 2>&1 || true
	cat "$work/lint-spec.log"
	grep -q ' 0 errors' "$work/lint-spec.log" || fail "rpmlint: errors in the spec"
else
	echo "rpm.sh: no rpmlint (Debian: apt-get install rpmlint): the spec is only parsed"
fi

# 2. rpmbuild -ta.
echo "rpm.sh: rpmbuild -ta $(basename "$tarball")${slurm_mm:+ for Slurm $slurm_mm}"
if ! rpmbuild --load "$macros" "${defs[@]}" "${check[@]}" --nodeps -ta "$tarball" \
	>"$work/rpmbuild.log" 2>&1; then
	tail -60 "$work/rpmbuild.log"
	# a failing %check: which tests, and their logs
	grep -E '^(FAIL|ERROR):' "$work/rpmbuild.log" || true
	for log in "$work"/rpmbuild/BUILD/dtplan-*/test-suite.log; do
		[ -f "$log" ] && sed -n '/^FAIL: \|^ERROR: /,$p' "$log" | head -200
	done
	fail "rpmbuild -ta $tarball"
fi
rpms=$work/rpmbuild/RPMS
arch_rpm() { ls "$rpms"/*/"$1-$version"-*.rpm 2>/dev/null | grep -v debug | head -1; }
cli=$(arch_rpm dtplan)
spank=$(arch_rpm slurm-spank-dtplan)
collector=$(arch_rpm dtplan-collector)
for r in cli spank collector; do
	[ -n "${!r}" ] || fail "rpmbuild made no $r package: $(ls -R "$rpms")"
done
case $collector in */noarch/*) ;; *) fail "$collector is not noarch" ;; esac

# 3. What each package holds and needs.
has() { # has RPM FILE...
	local list r=$1
	shift
	list=$(rpm -qpl "$r")
	for f; do
		grep -qx "$f" <<<"$list" || fail "$f not in $(basename "$r")"
	done
}
plugindir=$(rpm -qp --qf '[%{FILENAMES}\n]' "$spank" | sed -n 's|/spank_dtplan\.so$||p')
[ -n "$plugindir" ] || fail "no spank_dtplan.so in $(basename "$spank")"
has "$cli" /usr/bin/dtplan /usr/share/doc/dtplan/launchers.md
has "$spank" "$plugindir/dtplan_core.so" "$plugindir/dtplan_submit.so" \
	/etc/slurm/plugstack.conf.d/dtplan.conf
has "$collector" /usr/lib/systemd/system/dtplan-collector.service \
	/usr/share/doc/dtplan-collector/prometheus-dtplan.yml
# (outputs read whole: grep -q ending a pipe early fails it under pipefail)
grep -q '^/usr/share/man/man1/dtplan\.1' <<<"$(rpm -qpl "$cli")" || fail "no dtplan.1 in $(basename "$cli")"
grep -q '/man8/spank_dtplan\.8' <<<"$(rpm -qpl "$spank")" || fail "no spank_dtplan.8 in $(basename "$spank")"
# the snippet, commented out, names the plugin folder
rpm2cpio "$spank" | (cd "$work" && cpio -idm --quiet ./etc/slurm/plugstack.conf.d/dtplan.conf)
grep -qx "#optional $plugindir/spank_dtplan.so .*" "$work/etc/slurm/plugstack.conf.d/dtplan.conf" ||
	fail "the plugstack snippet does not name $plugindir/spank_dtplan.so"
grep -qx /etc/slurm/plugstack.conf.d/dtplan.conf <<<"$(rpm -qp --configfiles "$spank")" ||
	fail "the plugstack snippet is not %config"
requires=$(rpm -qp --requires "$spank")
if [ -n "$slurm_mm" ]; then
	next=$(awk -F. -v v="$slurm_mm" 'BEGIN { split(v, a, "."); printf "%s.%02d", a[1], a[2] + 1 }')
	grep -qE "^slurm(\(x86-64\)|\([a-z0-9-]+\))? >= $slurm_mm\$" <<<"$requires" ||
		fail "$(basename "$spank") does not require slurm >= $slurm_mm: $requires"
	grep -qE "^slurm(\([a-z0-9-]+\))? < $next\$" <<<"$requires" ||
		fail "$(basename "$spank") does not require slurm < $next: $requires"
	grep -qE "^slurm-spank-dtplan-$slurm_mm( = .*)?\$" <<<"$(rpm -qp --provides "$spank")" ||
		fail "$(basename "$spank") does not provide slurm-spank-dtplan-$slurm_mm"
fi
for r in "$cli" "$spank"; do
	grep -qE '^libcurl(\([a-z0-9-]+\))? >= 7.60$' <<<"$(rpm -qp --requires "$r")" ||
		fail "$(basename "$r") does not require libcurl >= 7.60"
done
scripts=$(rpm -qp --scripts "$collector")
grep -q 'preset dtplan-collector.service\|install-system-units dtplan-collector.service' <<<"$scripts" ||
	fail "$(basename "$collector")'s %post does not preset its unit: $scripts"
grep -q 'dtplan-collector.service' <<<"$(sed -n '/preuninstall/,$p' <<<"$scripts")" ||
	fail "$(basename "$collector")'s %preun does not stop its unit"

# 4. rpmlint on the packages: errors fail, warnings are shown.
if [ -n "$have_rpmlint" ]; then
	rpmlint -c tests/rpmlint.toml "$cli" "$spank" "$collector" >"$work/lint.log" 2>&1 || true
	cat "$work/lint.log"
	grep -q ' 0 errors' "$work/lint.log" || fail "rpmlint: errors in the packages"
fi

if [ -n "${DTPLAN_RPM_KEEP:-}" ]; then
	mkdir -p "$DTPLAN_RPM_KEEP"
	cp "$cli" "$spank" "$collector" "$DTPLAN_RPM_KEEP"/
fi
echo "rpm.sh: $(basename "$cli"), $(basename "$spank"), $(basename "$collector"): built and checked"
