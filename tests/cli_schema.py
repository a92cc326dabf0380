#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/cli_schema.py: checks the CLI's own JSON against doc/dtplan.cli.schema.json.

Usage: cli_schema.py SCHEMA FILE...

Validates SCHEMA itself, then each FILE against it, an "integer" being a JSON
integer (5, not 5.0) as in tests/plan_schema.py.  Prints one line per problem,
naming the file and the place in it.  Exit status 0 when all is well, 1
otherwise, 77 (skip) when python3 has no jsonschema module.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_schema import check_files  # noqa: E402  (exits 77 without jsonschema)


def main(argv):
    return check_files(argv, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
