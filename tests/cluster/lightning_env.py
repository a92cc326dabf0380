#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One srun task's view through Lightning's own SLURMEnvironment.

Usage: lightning_env.py LIGHTNING_SRC   (the folder holding lightning/)

Builds lightning.fabric.plugins.environments.slurm.SLURMEnvironment, as
Lightning's Trainer does under srun, from the unmodified source
(src/lightning/fabric/plugins/environments/slurm.py, read at
7f0c3436cd3f6ad3753125672024fc415cbcb414), and prints one line:

  LIGHTNING host world global local node main_address main_port

and one line of what the plan says for this task:

  PLAN host WORLD_SIZE RANK LOCAL_RANK plan-node MASTER_ADDR MASTER_PORT

plan-node being the index, in the plan's (DTPLAN_FILE) node list, of the
node that holds RANK.  Only the modules slurm.py imports are loaded:
lightning, lightning.fabric and their subpackages stand as bare packages
on the source folder, so that their __init__ (all of Fabric, which wants
PyTorch 2) does not run; lightning_utilities (RequirementCache and the
rank-zero helpers, used for warnings and version flags) is stubbed where
it is not installed (tests/cli/fwstubs.py).
"""
import json
import os
import socket
import sys
import types

src = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [src, os.path.join(here, "..", "cli")]
import fwstubs  # noqa: E402

for p in ("lightning", "lightning.fabric", "lightning.fabric.plugins",
          "lightning.fabric.plugins.environments", "lightning.fabric.utilities"):
    m = types.ModuleType(p)
    m.__path__ = [os.path.join(src, *p.split("."))]
    sys.modules[p] = m
stubbed = fwstubs.install(["lightning_utilities"], [])
from lightning.fabric.plugins.environments.slurm import SLURMEnvironment  # noqa: E402

host = socket.gethostname()
assert SLURMEnvironment.detect(), "SLURMEnvironment.detect() is False"
env = SLURMEnvironment()
print(f"LIGHTNING {host} {env.world_size()} {env.global_rank()} {env.local_rank()} "
      f"{env.node_rank()} {env.main_address} {env.main_port}")
place = json.load(open(os.environ["DTPLAN_FILE"]))["placement"]
rank = int(os.environ["RANK"])
node = next(k["node"] for k in place["ranks"] if k["rank"] == rank)
print(f"PLAN {host} {os.environ['WORLD_SIZE']} {rank} {os.environ['LOCAL_RANK']} {node} "
      f"{os.environ['MASTER_ADDR']} {os.environ['MASTER_PORT']}")
print(f"STUBBED {host} {','.join(stubbed) or 'nothing'}")
