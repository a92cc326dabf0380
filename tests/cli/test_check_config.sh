#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan check-config: valid files, each kind of bad file, usage errors.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
etc="$top_srcdir/etc"

# The shipped examples are valid.
run 0 check-config --site "$etc/dtplan.conf" --topology "$etc/topology.conf"
stdout_has "topology: $etc/topology.conf"
stdout_has "switches: 3 (2 leaves, 2 levels)"
stdout_has "nodes: 8"
stdout_has "oversubscribed uplinks (threshold 2:1): none"
stdout_has "configuration is valid"

# Every key set: values shown, changed ones without "(default)", oversubscription listed.
run 0 check-config --site "$data/dtplan-full.conf" --topology "$data/topology-two-leaves.conf"
stdout_has "leaf1 4:1 (above threshold)"
stdout_has "oversubscribed uplinks (threshold 3:1):"
stdout_has "NodeName=node[1-4] GpuType=gb200 Gpus=4 NVLinkDomain=rack1"
stdout_has "switch settings: 2, node sets: 2"
if grep -E '^  Policy +policy +deny *$' "$out" >/dev/null; then _pass "Policy deny, not default"; else _fail "Policy line"; fi
if grep -E '^  BubbleThreshold .*0\.1 +\(default\)$' "$out" >/dev/null; then _fail "BubbleThreshold marked default"; else _pass "BubbleThreshold changed"; fi

# The plugstack line: arguments name the files and override the site file.
run 0 check-config --args "default=off policy=warn site=$data/dtplan-full.conf topology=$data/topology-two-leaves.conf"
stdout_has "site: $data/dtplan-full.conf"
if grep -E '^  Policy +policy +warn +\(default\)$' "$out" >/dev/null; then _pass "argument overrides site"; else _fail "policy=warn should win"; fi
run 0 check-config --args "probe_timeout=3s"
stdout_has "topology: (none)"
stdout_has "3.00 s"

# Bad topology files: exit 1, FILE:LINE: message.
run 1 check-config --topology "$data/topology-bad-key.conf"
stderr_has "dtplan check-config: $data/topology-bad-key.conf:1: unknown key 'Speed'"
run 1 check-config --topology "$data/topology-bad-twice.conf"
stderr_has "$data/topology-bad-twice.conf:3: switch 'leaf1' is defined twice (first at line 1)"
run 1 check-config --topology "$data/topology-bad-undefined.conf"
stderr_has "$data/topology-bad-undefined.conf:2: switch 'spine': child switch 'leaf2' is not defined"
run 1 check-config --topology "$data/topology-bad-cycle.conf"
stderr_has "$data/topology-bad-cycle.conf:3: switch 'agg' is its own ancestor"
run 1 check-config --topology "$data/topology-bad-node-two-leaves.conf"
stderr_has "$data/topology-bad-node-two-leaves.conf:2: node 'n4' is under two leaf switches: 'leaf1' (line 1) and 'leaf2'"
run 1 check-config --topology "$data/no-such-topology.conf"
stderr_has "$data/no-such-topology.conf: cannot open"

# Bad site files.
run 1 check-config --site "$data/dtplan-bad-key.conf"
stderr_has "$data/dtplan-bad-key.conf:3: unknown key 'NetworkBandwith' (known: the settings of dtplan.conf(5))"
run 1 check-config --site "$data/dtplan-bad-value.conf"
stderr_has "$data/dtplan-bad-value.conf:3: NetworkBandwidth: 'fast' is not a number"
run 1 check-config --site "$data/dtplan-conflict.conf"
stderr_has "$data/dtplan-conflict.conf:3: Policy=deny conflicts with Policy=warn at line 1"
run 1 check-config --site "$data/dtplan-unknown-switch.conf" --topology "$data/topology-two-leaves.conf"
stderr_has "$data/dtplan-unknown-switch.conf:2: SwitchName=leaf9: no switch 'leaf9' in the topology"

# Both files bad: every error is printed.
run 1 check-config --site "$data/dtplan-bad-key.conf" --topology "$data/topology-bad-key.conf"
stderr_has "dtplan-bad-key.conf:3:"
stderr_has "topology-bad-key.conf:1:"

# Bad plugstack arguments.
run 1 check-config --args "default=off colour=blue"
stderr_has "plugstack.conf: argument 'colour=blue': unknown key 'colour'"
run 1 check-config --args "policy"
stderr_has "argument 'policy': 'policy' is not key=value"
run 1 check-config --args "policy=warn policy=deny"
stderr_has "argument 'policy=deny' conflicts with 'policy=warn'"

# Usage.
run 0 check-config --help
stdout_starts "Usage: dtplan check-config"
run 2 check-config --bogus
stderr_has "unknown option '--bogus'"
run 2 check-config --site
stderr_has "option '--site' needs a value"
run 2 check-config --site a --site b
stderr_has "--site given twice"
run 2 check-config --site "$data/dtplan-full.conf" --args "site=$data/dtplan-full.conf"
stderr_has "the site file is given twice"
run 0 help
stdout_has "check-config"

finish
