#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# "Did you mean": a mistyped command or option names the nearest one on
# stderr (Damerau-Levenshtein, cli/suggest.c) and exits 2; a word near
# nothing gets no suggestion.
. "$(dirname "$0")/lib.sh"

run 2 paln
stderr_has "unknown command 'paln'; did you mean 'plan'?"
stderr_has "Usage: dtplan"
run 2 chekc-config
stderr_has "did you mean 'check-config'?"
run 2 chec
stderr_has "did you mean 'check-config'?"
run 2 ovserve --plan x
stderr_has "did you mean 'observe'?"
run 2 zzzzzz
stderr_has "unknown command 'zzzzzz'"
if grep -q "did you mean" "$err"; then _fail "zzzzzz gets a suggestion"; else _pass "zzzzzz gets none"; fi
run 2 help shwo
stderr_has "dtplan help: unknown command 'shwo'; did you mean 'show'?"
# completion is a command, but not one to suggest
run 2 completio
if grep -q "completion" "$err"; then _fail "the hidden command is suggested"; else _pass "the hidden command is not suggested"; fi

run 2 plan --modle llama2-7b --gpus 8
stderr_has "dtplan plan: unknown option '--modle'; did you mean '--model'?"
stderr_has "Try 'dtplan help plan'"
run 2 plan --model llama2-7b --gpu-per-node=4 --gpus 8
stderr_has "unknown option '--gpu-per-node=4'; did you mean '--gpus-per-node'?"
run 2 ledger --jsno
stderr_has "did you mean '--json'?"
run 2 check-config --stie x
stderr_has "did you mean '--site'?"
run 2 version --hepl
stderr_has "did you mean '--help'?"
run 2 plan --zzzzzzzz
stderr_has "unknown option '--zzzzzzzz'"
if grep -q "did you mean" "$err"; then _fail "--zzzzzzzz gets a suggestion"; else _pass "--zzzzzzzz gets none"; fi
finish
