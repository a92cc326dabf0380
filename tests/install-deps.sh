#!/bin/sh
# tests/install-deps.sh: installs what building and testing dtplan needs on
# Debian 12 / Ubuntu (as root).  Already-installed packages cost nothing.
set -eu

packages="build-essential autoconf automake libtool pkg-config
	libhwloc-dev hwloc libjansson-dev libcurl4-openssl-dev libcmocka-dev
	libslurm-dev slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
	iproute2 iptables iperf3 bats python3 python3-torch clang-format"

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get); try: sudo $0" >&2
	exit 1
fi
missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# Debian enables these services when systemd exists; the tests start their own.
for s in slurmctld slurmd munge; do
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		systemctl disable --now "$s" >/dev/null 2>&1 || :
	fi
done
echo "install-deps: done"
