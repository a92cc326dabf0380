#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cli/test_node.sh: dtplan node on the project's own hwloc XML fixtures.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/cli/lib.sh"
data="$top_srcdir/tests/data"

run 0 node --help
stdout_starts "Usage: dtplan node"
run 0 help node
stdout_starts "Usage: dtplan node"

# Table for people: golden file.
run 0 node --xml "$data/hgx-h100-8gpu.xml"
golden node-hgx.txt

# JSON: keys and values (8 GPUs in one 450 GB/s domain, one rail each).
run 0 node --xml "$data/hgx-h100-8gpu.xml" --json
json_eq 'sorted(j.keys())' "['cores', 'domains', 'gpus', 'hostname', 'nics', 'note', 'numa_nodes', 'source']"
json_eq 'j["hostname"], j["source"], j["cores"], j["numa_nodes"]' "('hgx01', 'xml', 16, 2)"
json_eq 'len(j["gpus"]), len(j["domains"]), len(j["nics"])' "(8, 1, 8)"
json_eq 'sorted(j["gpus"][0].keys())' "['domain', 'memory_bytes', 'model', 'nic', 'numa', 'os_name', 'pci_bus_id', 'vendor']"
json_eq '[g["nic"] for g in j["gpus"]]' "['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6', 'mlx5_7']"
json_eq 'j["domains"][0]["gpus"], j["domains"][0]["bandwidth_bytes_per_s"]' "([0, 1, 2, 3, 4, 5, 6, 7], 450000000000.0)"
json_eq 'sorted(j["domains"][0].keys())' "['bandwidth_bytes_per_s', 'fabric_id', 'gpus']"
json_eq 'sorted(j["nics"][0].keys())' "['kind', 'name', 'numa', 'pci_bus_id']"
json_eq '{n["kind"] for n in j["nics"]}' "{'infiniband'}"

# A CPU-only node: no GPUs, the NIC is null-free; the Omni-Path HFI is listed.
run 0 node --xml "$data/cpu-only.xml" --json
json_eq 'len(j["gpus"]), [n["kind"] for n in j["nics"]]' "(0, ['omnipath'])"

# PCIe node: lone GPUs, RoCE NICs.
run 0 node --xml "$data/pcie-4gpu.xml"
stdout_has "NVLink domains: 4"
stdout_has "mlx5_0       roce"

# Live discovery honours HWLOC_XMLFILE (the Slurm test cluster sets it).
HWLOC_XMLFILE="$data/hgx-h100-8gpu.xml" run 0 node --timeout 30s
stdout_has "Node hgx01 (source live): 16 cores, 2 NUMA nodes"
stdout_has "0   450 GB/s      0,1,2,3,4,5,6,7"

# --cache-dir: a miss falls back to live discovery, a hit reads <hostname>.xml.
cache=$(mktemp -d)
HWLOC_XMLFILE="$data/hgx-h100-8gpu.xml" run 0 node --cache-dir "$cache"
stdout_has "(source live)"
cp "$data/pcie-4gpu.xml" "$cache/$(uname -n).xml"
run 0 node --cache-dir "$cache" --json
json_eq 'j["source"], len(j["gpus"])' "('cache', 4)"
rm -rf "$cache"

# Discovery failures exit 1 and name the file.
run 1 node --xml "$data/truncated.xml"
stderr_has "truncated.xml: not a complete hwloc XML topology (truncated"
run 1 node --xml "$data/garbage.xml"
stderr_has "garbage.xml"
run 1 node --xml "$data/does-not-exist.xml"
stderr_has "does-not-exist.xml: cannot open: No such file or directory"
run 1 node --xml "$data"
stderr_has "is a directory, not a regular file"

# Usage errors exit 2.
run 2 node --bogus
stderr_has "unknown option '--bogus'"
run 2 node --xml
stderr_has "needs a value"
run 2 node --timeout soon
stderr_has "--timeout"
run 2 node --timeout 0
stderr_has "must be more than 0"
run 2 node extra
stderr_has "unexpected argument 'extra'"

finish
