#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan pipeline: 1F1B simulation and chart.
. "$(dirname "$0")/lib.sh"

run 0 pipeline --help; stdout_starts "Usage: dtplan pipeline"

# DESIGN: p=4, m=8: bubble 3/11 = 27.3%; makespan (m + p - 1)(f + b) = 11 * 3 = 33
run 0 pipeline --stages 4 --microbatches 8
golden pipeline_4x8.txt
run 0 pipeline --stages 4 --microbatches 8 --json
json_eq "round(j['bubble_fraction'], 6)" 0.272727
json_eq "j['makespan']" 33
json_eq "j['ideal']" 24
# the fraction does not depend on the backward ratio: 3/11 again, makespan 11 * 2
run 0 pipeline --stages 4 --microbatches 8 --backward-ratio 1 --json
json_eq "round(j['bubble_fraction'], 6)" 0.272727
json_eq "j['makespan']" 22
# 5% needs m >= 57 at p=4: 3/60 = 0.05
run 0 pipeline --stages 4 --microbatches 57 --json
json_eq "round(j['bubble_fraction'], 6)" 0.05
# interleaved: (p-1)/(v m) of compute = 3/16
run 0 pipeline --stages 4 --microbatches 8 --chunks 2 --json
json_eq "j['closed_form']" 0.1875
run 0 pipeline --stages 2 --microbatches 4 --chunks 2
golden pipeline_2x4_v2.txt
run 0 pipeline --stages 1 --microbatches 3 --json
json_eq "j['bubble_fraction']" 0
run 0 pipeline --stages 64 --microbatches 512; stdout_has "chart omitted"

# bad input
run 2 pipeline --microbatches 8; stderr_has "--stages is required"
run 2 pipeline --stages 4; stderr_has "--microbatches is required"
run 2 pipeline --stages 0 --microbatches 8; stderr_has "--stages: 0 is out of range"
run 2 pipeline --stages -4 --microbatches 8; stderr_has "--stages: -4 is out of range"
run 2 pipeline --stages four --microbatches 8; stderr_has "'four' is not a whole number"
run 2 pipeline --stages 4 --microbatches 8 --backward-ratio x; stderr_has "--backward-ratio: 'x' is not a number"
run 2 pipeline --stages 4 --microbatches 8 --backward-ratio 0; stderr_has "--backward-ratio: 0 is out of range"
run 2 pipeline --stages 4 --microbatches 8 --chunks 0; stderr_has "--chunks: 0 is out of range"
run 2 pipeline --stages 4 --microbatches 6 --chunks 2; stderr_has "must be a multiple of --stages 4"
run 2 pipeline --stages 4096 --microbatches 1000000; stderr_has "too large to simulate"
run 2 pipeline --stages 4 --microbatches 8 --fast; stderr_has "unknown option '--fast'"
run 2 pipeline --stages 4 --microbatches; stderr_has "needs a value"
run 2 pipeline --stages 4 --microbatches 8 now; stderr_has "unexpected argument 'now'"
finish
