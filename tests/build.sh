#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/build.sh: builds dtplan in the source tree with -Werror, configuring
# it first when that has not been done.  Used by tests/run-all.sh and
# tests/cluster/demo.sh.
set -eu
cd "$(dirname "$0")/.."
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"
