#!/bin/sh
# tests/install-deps.sh: installs what building and testing dtplan needs on
# Debian 12 / Ubuntu (as root).  Already-installed packages cost nothing.
#
# Usage: tests/install-deps.sh [PACKAGE...]   (default: everything)
#
# Packages' maintainer scripts are kept from starting system daemons
# (slurmctld, slurmd, munge): the tests start their own.
set -eu

all="build-essential autoconf automake libtool pkg-config
	libhwloc-dev hwloc libjansson-dev libcurl4-openssl-dev libcmocka-dev libmunge-dev libsqlite3-dev
	libslurm-dev slurmctld slurmd slurmdbd slurm-client slurm-wlm-basic-plugins munge mariadb-server
	iproute2 iptables iperf3 libnetfilter-queue-dev bats lua5.3 python3 python3-jsonschema python3-torch
	valgrind clang clang-format-14 debhelper"
# What a test only uses when it is there (it then skips): installed where the
# release has it.  clang-format-14 is the house format's (tests/check_format.sh)
# and neither Debian 13 nor sid has it (issue 24).
optional="clang-format-14"
packages=${*:-$all}

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get); try: sudo $0" >&2
	exit 1
fi
missing=
for p in $packages; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
		missing="$missing $p"
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
	case " $(echo $optional) " in
	*" $p "*)
		if ! apt-cache show "$p" >/dev/null 2>&1; then
			echo "install-deps: $p is not in this release's archive; what needs it skips"
			continue
		fi
		;;
	esac
	wanted="$wanted $p"
done
missing=$wanted
[ -n "$missing" ] || exit 0
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
