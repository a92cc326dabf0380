#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan comm: one collective.
. "$(dirname "$0")/lib.sh"

run 0 comm --help; stdout_starts "Usage: dtplan comm"

# DESIGN: 14 GB ring all-reduce over many GPUs: 2 * 1023/1024 * 14e9 / 900e9 = 31.1 ms
run 0 comm --op allreduce --bytes 14GB --ranks 1024 --bandwidth 900GB/s
golden comm_allreduce_nvlink.txt
run 0 comm --op allreduce --bytes 14GB --ranks 1024 --bandwidth 900GB/s --json
json_eq "round(j['seconds'] * 1000, 2)" 31.08
# bytes each GPU sends: 2 (n-1)/n S; n = 8: 1.75 S
run 0 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB/s --json
json_eq "j['bytes_per_rank']" 1750000000
# 400 Gb/s = 50 GB/s: 14 GB all-reduce about 560 ms
run 0 comm --op allreduce --bytes 14GB --ranks 1024 --bandwidth 400Gb/s --json
json_eq "round(j['seconds'], 2)" 0.56
# all-gather: (n-1)/n S / B + (n-1) alpha = 0.75 * 1e9 / 1e11 + 3 * 1e-5 = 7.53 ms
run 0 comm --op allgather --bytes 1GB --ranks 4 --bandwidth 100GB/s --latency 10us --json
json_eq "round(j['seconds'] * 1e6, 3)" 7530.0
# plain transfer of 40 GB at 50 GB/s: 800 ms
run 0 comm --op p2p --bytes 40GB --ranks 2 --bandwidth 50GB/s --json
json_eq "round(j['seconds'], 6)" 0.8
# tree all-reduce: 2 S/B + 2 log2(n) alpha = 2 * 1e9/1e11 + 2 * 3 * 1e-5 = 20.06 ms
run 0 comm --op allreduce --algo tree --bytes 1GB --ranks 8 --bandwidth 100GB/s --latency 10us --json
json_eq "round(j['seconds'] * 1e6, 3)" 20060.0
json_eq "j['algo']" tree
# NVLS all-reduce (the switch reduces): (n-1)/n S/B + 2 alpha = 0.875 * 1e9/1e11 + 2 * 1e-5 = 8.77 ms
run 0 comm --op allreduce --algo nvls --bytes 1GB --ranks 8 --bandwidth 100GB/s --latency 10us --json
json_eq "round(j['seconds'] * 1e6, 3)" 8770.0
json_eq "j['algo']" nvls
json_eq "j['bytes_per_rank']" 875000000
run 0 comm --op reducescatter --bytes 1GiB --ranks 2 --bandwidth 1e9 --json
json_eq "j['bytes_per_rank']" 536870912

# bad input
run 2 comm --bytes 1GB --ranks 8 --bandwidth 50GB/s; stderr_has "--op is required"
run 2 comm --op allreduce --ranks 8 --bandwidth 50GB/s; stderr_has "--bytes is required"
run 2 comm --op allreduce --bytes 1GB --bandwidth 50GB/s; stderr_has "--ranks is required"
run 2 comm --op allreduce --bytes 1GB --ranks 8; stderr_has "--bandwidth is required"
run 2 comm --op broadcast --bytes 1GB --ranks 8 --bandwidth 50GB/s; stderr_has "'broadcast' is not"
run 2 comm --op allreduce --bytes 1XB --ranks 8 --bandwidth 50GB/s; stderr_has "--bytes: unknown unit 'XB'"
run 2 comm --op allreduce --bytes -1GB --ranks 8 --bandwidth 50GB/s; stderr_has "--bytes"
run 2 comm --op allreduce --bytes 0 --ranks 8 --bandwidth 50GB/s; stderr_has "must be more than zero"
run 2 comm --op allreduce --bytes 1e30 --ranks 8 --bandwidth 50GB/s; stderr_has "absurdly large"
run 2 comm --op allreduce --bytes 1GB --ranks 0 --bandwidth 50GB/s; stderr_has "--ranks: 0 is out of range"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB; stderr_has "--bandwidth: unknown unit"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 0GB/s; stderr_has "--bandwidth"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB/s --latency 5parsecs; stderr_has "--latency: unknown unit"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB/s --latency 2d; stderr_has "over an hour"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB/s --algo star; stderr_has "--algo"
run 2 comm --op allgather --algo tree --bytes 1GB --ranks 8 --bandwidth 50GB/s; stderr_has "--algo tree applies to allreduce only"
run 2 comm --op reducescatter --algo nvls --bytes 1GB --ranks 8 --bandwidth 50GB/s; stderr_has "--algo nvls applies to allreduce only"
run 2 comm --op p2p --bytes 1GB --ranks 8 --bandwidth 50GB/s; stderr_has "p2p is between 2 ranks"
run 2 comm --op allreduce --bytes 1GB --ranks 8 --bandwidth 50GB/s --verbose; stderr_has "unknown option '--verbose'"
finish
