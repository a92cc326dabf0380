#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile and careless input through the CLI (issue 13): every case gets a
# clear error and an exit status, never a hang, a crash or a wrong answer.
# dtplan runs under timeout(1): a hang fails the case (status 124) instead of
# hanging the test.
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "$out" "$err"' EXIT
printf '#!/bin/sh\nexec timeout 30 "%s" "$@"\n' "$DTPLAN" >"$tmp/dtplan"
chmod +x "$tmp/dtplan"
DTPLAN="$tmp/dtplan"
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"

# Findings 4, 5, 6: a FIFO blocked forever, /dev/zero ran memory out, a
# directory gave a parser's message.  Each reader names the path and what it is.
run 1 check-config --site "$tmp/fifo"
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 check-config --topology "$tmp/fifo"
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 check-config --site /dev/zero
stderr_has "/dev/zero: is a character device, not a regular file"
run 1 check-config --topology /dev/urandom
stderr_has "/dev/urandom: is a character device, not a regular file"
run 1 check-config --site "$tmp/dir"
stderr_has "$tmp/dir: is a directory, not a regular file"
run 1 check-config --args "site=$tmp/fifo"
stderr_has "is a FIFO (named pipe)"
run 1 plan --model llama3-8b --gpus 8 --site "$tmp/fifo"
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 plan --model llama3-8b --node-json "n[1-2]=$tmp/fifo"
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 plan --model llama3-8b --node-json "n[1-2]=$tmp/dir"
stderr_has "$tmp/dir: is a directory, not a regular file"
run 1 plan --model llama3-8b --node-json "n[1-2]=/dev/zero"
stderr_has "/dev/zero: is a character device, not a regular file"
run 1 plan --model "$tmp/dir/" --gpus 8
stderr_has "$tmp/dir/: is a directory, not a regular file"
run 1 ledger --model "$tmp/fifo" --gpus 8
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 node --xml "$tmp/fifo"
stderr_has "$tmp/fifo: is a FIFO (named pipe), not a regular file"
run 1 node --xml /dev/zero
stderr_has "/dev/zero: is a character device, not a regular file"
# A site file over its 4 MiB limit (sparse: no disk used) is refused unread.
truncate -s 5M "$tmp/huge.conf"
run 1 check-config --site "$tmp/huge.conf"
stderr_has "$tmp/huge.conf: larger than the 4 MiB limit for a site file"
# A node JSON over 1 MiB, made of blanks: refused for its size, not parsed.
head -c 1048577 /dev/zero | tr '\0' ' ' >"$tmp/big.json"
run 1 plan --model llama3-8b --node-json "n[1-2]=$tmp/big.json"
stderr_has "larger than the 1 MiB limit for a node JSON file"

# Finding 1: eighteen ranges of 10^18 names and one of 446744073709551616 sum
# to 2^64, which wrapped to 0 (SIGFPE, exit 136); +4 wrapped to 4 names.
r18=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18; do r18="${r18}0-999999999999999999,"; done
echo "SwitchName=s[${r18}0-446744073709551615] Oversubscription=2" >"$tmp/wrap0.conf"
run 1 check-config --site "$tmp/wrap0.conf"
stderr_has "$tmp/wrap0.conf:1: SwitchName=s["
stderr_has "the ranges in one bracket name more than 18446744073709551615 hosts"
echo "SwitchName=s[${r18}0-446744073709551619] Oversubscription=2" >"$tmp/wrap4.conf"
run 1 check-config --site "$tmp/wrap4.conf"
stderr_has "the ranges in one bracket name more than"
run 2 plan --model llama3-8b --nodes "n[${r18}0-446744073709551615]"
stderr_has "the ranges in one bracket name more than"
run 2 plan --model llama3-8b --nodes "n[1-18446744073709551615]"
stderr_has "more than 18 digits"

# Finding 12: infinite or nearly zero numbers in the site file, named with
# file, line and key.
printf 'Policy=warn\nSwitchName=s1 Oversubscription=1e300:1e-300\n' >"$tmp/ratio.conf"
run 1 check-config --site "$tmp/ratio.conf"
stderr_has "$tmp/ratio.conf:2: Oversubscription: '1e300:1e-300' is out of range (at least 0.1, at most 1000)"
printf 'SwitchName=s1 UplinkBandwidth=1e-300\n' >"$tmp/uplink.conf"
run 1 check-config --site "$tmp/uplink.conf"
stderr_has "$tmp/uplink.conf:1: UplinkBandwidth: '1e-300' is out of range (at least 1.00 MB/s, at most 100 TB/s)"
run 1 check-config --args "net_bandwidth=1e-300"
stderr_has "net_bandwidth: '1e-300' is out of range"

# Finding 13: 100,000 switches from one 44-byte line (a minute before; no
# time is asserted here, bench/bench_parse measures it).
echo "SwitchName=s[1-100000] Oversubscription=2:1" >"$tmp/many.conf"
run 0 check-config --site "$tmp/many.conf"
stdout_has "switch settings: 100000, node sets: 0"

# Finding 16: TP x PP overflowed int and divided by zero (exit 136).
run 2 ledger --model 7B --gpus 8 --tp 65536 --pp 65536
stderr_has "TP 65536 x PP 65536 = 4294967296 GPUs is more than the 8 GPUs of the job"

# Finding 21: a 1e-300-parameter model was planned, -7B was "unknown", and
# a latency of -0 printed as "-0.0 us".
run 2 ledger --model 1e-300 --gpus 8
stderr_has "--model: model size 1e-300 is less than the 1000000 parameters dtplan plans for"
run 2 plan --model 1e-300 --gpus 8
stderr_has "model size 1e-300 is less than the 1000000 parameters"
run 2 ledger --model -7B --gpus 8
stderr_has "--model: model size '-7B' must be positive, without a sign (such as 7B)"
run 0 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 100GB/s --latency -0
stdout_has "latency 0.0 us"
if grep -qF -- "-0.0" "$out"; then _fail "comm prints -0.0"; else _pass "no -0.0 in comm"; fi
finish
