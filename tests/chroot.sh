#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/chroot.sh: dtplan's tests on other Debian releases (and their Slurm),
# in debootstrap chroots on this machine.
#
# Usage: tests/chroot.sh build SUITE        make the chroot, or reuse the cached one
#        tests/chroot.sh shell SUITE [CMD]  run CMD (default: bash) in it, in a fresh copy
#                                           of this tree in /build/dtplan (the last
#                                           copy with DTPLAN_CHROOT_KEEP_TREE=1)
#        tests/chroot.sh test SUITE         build it, then in a fresh copy of this tree:
#                                           the -Werror build and make check (without
#                                           the source tree's checks: SOURCE_CHECKS in
#                                           Makefile.am), and the cluster suite (under
#                                           the cluster lock)
#
# SUITE is a Debian suite debootstrap knows: trixie (Debian 13, Slurm 24.11),
# sid (Slurm 26.05).  As root.
#
# The chroot lives in $DTPLAN_CHROOT_CACHE/chroot-SUITE (default
# /var/cache/dtplan-ci) and is kept between runs.  Its stamp records the
# suite and tests/install-deps.sh's package list; when either changed, or
# the chroot is missing or half-made, it is made again from scratch (into
# a new folder, moved into place once complete).
#
# Mounts: the chroot is a private mount point of its own, with proc, sysfs,
# /dev, /dev/pts, a tmpfs on /dev/shm and a private tmpfs on /run (so the
# network namespaces in its /run/netns never sit beside another cluster's),
# and ../shared (Slurm headers, fixtures) read-only when there.  They are
# unmounted in reverse order when this script exits, however it exits.
#
# The network namespaces, bridges and iptables chain of a chroot's cluster
# are the machine's: each suite's cluster has its own folder, interface
# prefix, subnet and ports (cluster_env below), so that clusters of
# different suites never collide; the cluster suite still runs under the
# lock $DTPLAN_CLUSTER_LOCK (default /tmp/dtplan-cluster.lock), for the CPUs.
#
# Environment: DTPLAN_CHROOT_CACHE, DTPLAN_CLUSTER_LOCK, DTPLAN_MIRROR
# (default http://deb.debian.org/debian), DTPLAN_CHROOT_ACCOUNTING=0 (test: the
# cluster without accounting, on by default), DTPLAN_CHROOT_NO_CLUSTER=1 (test:
# skip the cluster suite), DTPLAN_CHROOT_BATS (test: the bats files, default
# all), DTPLAN_CHROOT_KEEP_TREE=1 (shell: keep the last copy),
# DTPLAN_CHROOT_PACKAGES=1 (test: dpkg-buildpackage too, in a clone of the
# copy).
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DTPLAN_CHROOT_CACHE:-/var/cache/dtplan-ci}
lock=${DTPLAN_CLUSTER_LOCK:-/tmp/dtplan-cluster.lock}
mirror=${DTPLAN_MIRROR:-http://deb.debian.org/debian}
PROG=chroot.sh

say() { echo "$PROG: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount, chroot)"
[ $# -ge 2 ] || die "usage: $0 build|shell|test SUITE [CMD...]"
action=$1 suite=$2
shift 2
[[ $suite =~ ^[a-z]+$ ]] || die "SUITE '$suite' is not a suite name"
root=$cache/chroot-$suite

# ----------------------------------------------------------------------
# Mounts
# ----------------------------------------------------------------------
mounted=()

# mnt TARGET ARGS...: mount, and remember it for unmount_all
mnt() {
	local t=$1
	shift
	mount "$@" "$t"
	mounted+=("$t")
}

mount_all() {
	local c=$1
	mnt "$c" --bind "$c"
	mount --make-private "$c"
	mnt "$c/proc" -t proc proc
	mnt "$c/sys" -t sysfs sysfs
	mnt "$c/dev" --bind /dev
	mnt "$c/dev/pts" --bind /dev/pts
	mnt "$c/dev/shm" -t tmpfs -o mode=1777 tmpfs
	mnt "$c/run" -t tmpfs -o mode=755 tmpfs
	mount --make-private "$c/run"
	if [ -d "$top/../shared" ]; then
		mkdir -p "$c/build/shared"
		mnt "$c/build/shared" --bind "$top/../shared"
		mount -o remount,bind,ro "$c/build/shared"
	fi
}

unmount_all() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" ||
			say "warning: could not unmount ${mounted[$i]}"
	done
	mounted=()
}
# shellcheck disable=SC2317
on_exit() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_all
	[ -z "${partial:-}" ] || rm -rf --one-file-system "$partial"
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_chroot DIR CMD...: CMD in the chroot, with a plain environment
in_chroot() {
	local c=$1
	shift
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive chroot "$c" "$@"
}

# ----------------------------------------------------------------------
# build
# ----------------------------------------------------------------------
stamp_text() {
	echo "suite $suite"
	echo "mirror $mirror"
	echo "packages $("$top/tests/install-deps.sh" --list)"
}

build() {
	local want t
	want=$(stamp_text)
	if [ -f "$root/etc/dtplan-chroot.stamp" ] && [ "$(cat "$root/etc/dtplan-chroot.stamp")" = "$want" ]; then
		say "$suite: cached in $root"
		return 0
	fi
	t=$(date +%s)
	command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
	[ -f "/usr/share/debootstrap/scripts/$suite" ] || die "debootstrap does not know '$suite'"
	mkdir -p "$cache"
	partial=$root.new
	rm -rf --one-file-system "$partial"
	say "$suite: debootstrap into $partial"
	debootstrap --variant=minbase --include=ca-certificates "$suite" "$partial" "$mirror" \
		>"$cache/debootstrap-$suite.log" 2>&1 ||
		{ tail -20 "$cache/debootstrap-$suite.log" >&2; die "$suite: debootstrap failed"; }
	# sid's Release file on a mirror may have expired; nothing starts daemons
	echo 'Acquire::Check-Valid-Until "false";' >"$partial/etc/apt/apt.conf.d/99dtplan"
	printf '#!/bin/sh\nexit 101\n' >"$partial/usr/sbin/policy-rc.d"
	chmod 755 "$partial/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$partial/etc/resolv.conf" 2>/dev/null || true
	cp "$top/tests/install-deps.sh" "$partial/tmp/install-deps.sh"
	mount_all "$partial"
	in_chroot "$partial" sh /tmp/install-deps.sh ||
		die "$suite: installing the packages failed"
	in_chroot "$partial" apt-get clean
	unmount_all
	rm -f "$partial/tmp/install-deps.sh"
	echo "$want" >"$partial/etc/dtplan-chroot.stamp"
	rm -rf --one-file-system "$root"
	mv "$partial" "$root"
	partial=
	say "$suite: built in $(($(date +%s) - t)) s ($(du -sh --one-file-system "$root" | cut -f1))"
}

# ----------------------------------------------------------------------
# The tree, the cluster's place
# ----------------------------------------------------------------------

# copy_tree: a fresh clone of this tree in /build/dtplan, with the working
# tree's changes (tracked and untracked, not ignored) over it
copy_tree() {
	local dst=$root/build/dtplan
	rm -rf --one-file-system "$dst"
	mkdir -p "$root/build"
	git -C "$top" ls-files -z --cached --others --exclude-standard >/dev/null
	git clone -q "$top" "$dst"
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 -r tar -cf - --no-recursion --ignore-failed-read 2>/dev/null) |
		tar -xf - -C "$dst"
}

# cluster_env: the cluster's folder, prefix, subnet and ports per suite
# (the machine's own cluster: /tmp/dtplan-cluster, dt, 10.213, 6817-6820)
cluster_env() {
	local n
	case $suite in
	trixie) n=1 ;;
	sid) n=2 ;;
	*) n=$((3 + $(printf '%s' "$suite" | cksum | cut -d' ' -f1) % 20)) ;;
	esac
	echo "DTPLAN_CLUSTER_DIR=/tmp/dtplan-cluster-$suite"
	echo "DTPLAN_CLUSTER_PREFIX=c${n}"
	echo "DTPLAN_CLUSTER_NET=10.$((213 + n))"
	echo "DTPLAN_CLUSTER_CTLD_PORT=$((6817 + 10 * n))"
	echo "DTPLAN_CLUSTER_SLURMD_PORT=$((6818 + 10 * n))"
	# accounting: slurmdbd's port, and its MariaDB's on 127.0.0.1 (it
	# starts there: README, "Accounting on Debian 13 and sid"); mtbf.bats
	# asks only about the nodes it acts on, so a node a loaded machine's
	# slurmctld marks "Not responding" for a while no longer counts
	echo "DTPLAN_CLUSTER_DBD_PORT=$((6819 + 10 * n))"
	echo "DTPLAN_CLUSTER_DB_PORT=$((6820 + 10 * n))"
	echo "DTPLAN_CLUSTER_ACCOUNTING=${DTPLAN_CHROOT_ACCOUNTING:-1}"
}

mins() { awk -v s="$1" 'BEGIN { printf "%.1f min", s / 60 }'; }

case $action in
build)
	mkdir -p "$cache"
	exec 9>"$cache/lock-$suite"
	flock 9
	build
	;;
shell)
	mkdir -p "$cache"
	exec 9>"$cache/lock-$suite"
	flock 9
	build
	# DTPLAN_CHROOT_KEEP_TREE=1: the copy (and its build) of the last run
	[ "${DTPLAN_CHROOT_KEEP_TREE:-0}" = 1 ] && [ -d "$root/build/dtplan" ] || copy_tree
	mount_all "$root"
	# shellcheck disable=SC2046
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 $(cluster_env) \
		DTPLAN_CLUSTER_NO_INSTALL=1 chroot "$root" sh -c 'cd /build/dtplan && exec "$@"' sh "${@:-bash}"
	;;
test)
	mkdir -p "$cache"
	exec 9>"$cache/lock-$suite"
	flock 9
	t0=$(date +%s)
	build
	t1=$(date +%s)
	copy_tree
	mount_all "$root"
	slurm=$(in_chroot "$root" dpkg-query -W -f='${Version}' libslurm-dev)
	say "$suite: Slurm $slurm; chroot ready in $(mins $((t1 - t0)))"
	# shellcheck disable=SC2046
	run_in() {
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 $(cluster_env) \
			DTPLAN_CLUSTER_NO_INSTALL=1 DTPLAN_FIXTURES=/build/shared/fixtures \
			chroot "$root" sh -c 'cd /build/dtplan && exec "$@"' sh "$@"
	}
	run_in sh -c 'autoreconf -fi >/dev/null 2>&1 && tests/build.sh' ||
		die "$suite: the -Werror build failed"
	run_in sh -c 'make check -j"$(nproc)" SOURCE_CHECKS= >/tmp/make-check.log 2>&1' || {
		run_in sh -c 'tail -40 /tmp/make-check.log; for f in $(find tests -name "*.log" ! -name test-suite.log); do
			grep -q -E "^:test-result: (FAIL|ERROR|XPASS)" "${f%.log}.trs" 2>/dev/null &&
				{ echo "== $f"; tail -60 "$f"; }; done' >&2
		die "$suite: make check failed"
	}
	# the counts, from automake's summary
	counts=$(run_in sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): *\([0-9]*\)$/\1 \2/p' test-suite.log |
		paste -sd' ' -)
	say "$suite: make check: $counts"
	t2=$(date +%s)
	say "$suite: build and make check in $(mins $((t2 - t1)))"
	if [ "${DTPLAN_CHROOT_PACKAGES:-0}" = 1 ]; then
		# the Debian packages (their Slurm's), in a clone of the copy
		run_in sh -c 'rm -rf /build/deb && mkdir -p /build/deb && git clone -q . /build/deb/dtplan &&
			cd /build/deb/dtplan && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b \
			>/build/deb/build.log 2>&1 && ls /build/deb/*.deb' >&2 ||
			{ run_in tail -60 /build/deb/build.log >&2; die "$suite: dpkg-buildpackage failed"; }
		t2b=$(date +%s)
		say "$suite: dpkg-buildpackage in $(mins $((t2b - t2)))"
		t2=$t2b
	fi
	if [ "${DTPLAN_CHROOT_NO_CLUSTER:-0}" = 1 ]; then
		say "$suite: cluster suite skipped (DTPLAN_CHROOT_NO_CLUSTER=1)"
		exit 0
	fi
	rc=0
	# shellcheck disable=SC2086
	flock "$lock" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 $(cluster_env) \
		DTPLAN_CLUSTER_NO_INSTALL=1 chroot "$root" sh -c 'cd /build/dtplan && exec tests/cluster/run.sh "$@"' \
		sh ${DTPLAN_CHROOT_BATS:-} >"$cache/cluster-$suite.log" 2>&1 || rc=$?
	t3=$(date +%s)
	# (grep -c fails when it counts none: no pipefail exit before the report)
	{ grep -E '^(ok|not ok) ' "$cache/cluster-$suite.log" | grep -c '^ok' || true; } |
		sed "s/^/$PROG: $suite: cluster tests passed: /" >&2
	grep -E '^not ok ' "$cache/cluster-$suite.log" >&2 || true
	say "$suite: cluster suite in $(mins $((t3 - t2))), status $rc (log: $cache/cluster-$suite.log)"
	[ "$rc" = 0 ] || { tail -80 "$cache/cluster-$suite.log" >&2; exit "$rc"; }
	;;
*)
	die "unknown action '$action' (build, shell, test)"
	;;
esac
