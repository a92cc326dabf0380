#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/install-deps.sh: installs what building and testing dtplan needs on
# Debian 12 / Ubuntu (as root).  Already-installed packages cost nothing.
#
# Usage: tests/install-deps.sh [PACKAGE...]   (default: everything)
#        tests/install-deps.sh --list           prints the default list
#
# A word A|B means the first of A, B that the release's archive has (Debian
# 12 has clang-format-14, the house format's; Debian 13 and sid only
# clang-format, whose other version tests/check_format.sh then skips).
#
# Packages' maintainer scripts are kept from starting system daemons
# (slurmctld, slurmd, munge): the tests start their own.
set -eu

all="build-essential autoconf automake libtool pkg-config
	libhwloc-dev hwloc libjansson-dev libcurl4-openssl-dev libcmocka-dev libmunge-dev libsqlite3-dev
	libslurm-dev slurmctld slurmd slurmdbd slurm-client slurm-wlm-basic-plugins munge mariadb-server
	iproute2 iptables iperf3 libnetfilter-queue-dev bats lua5.3 python3 python3-jsonschema python3-torch
	valgrind clang clang-format-14|clang-format debhelper git
	libmicrohttpd-dev libsqlite3-dev sqlite3 curl prometheus chromium libyaml-dev rpm rpmlint zsh"
packages=${*:-$all}
if [ "$packages" = --list ]; then
	echo $all
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get); try: sudo $0" >&2
	exit 1
fi
installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'; }
missing=
for p in $packages; do
	case $p in
	*'|'*)
		have=
		for a in $(echo "$p" | tr '|' ' '); do
			installed "$a" && have=$a && break
		done
		[ -n "$have" ] || missing="$missing $p"
		;;
	*) installed "$p" || missing="$missing $p" ;;
	esac
done
if [ -z "$missing" ]; then
	exit 0
fi
command -v apt-get >/dev/null || { echo "install-deps: missing$missing and no apt-get" >&2; exit 1; }
echo "install-deps: installing$missing"
policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
	policy=/usr/sbin/policy-rc.d
	trap 'rm -f "$policy"' EXIT
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
wanted=
for p in $missing; do
	case $p in
	*'|'*)
		pick=
		for a in $(echo "$p" | tr '|' ' '); do
			# apt-cache show succeeds for a name only other packages mention
			if apt-cache show "$a" 2>/dev/null | grep -q '^Package:'; then
				pick=$a
				break
			fi
		done
		[ -n "$pick" ] || { echo "install-deps: none of $p is in this release's archive" >&2; exit 1; }
		p=$pick
		;;
	esac
	wanted="$wanted $p"
done
missing=$wanted
[ -n "$missing" ] || exit 0
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
