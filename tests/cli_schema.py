#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/cli_schema.py: checks the CLI's own JSON against doc/dtplan.cli.schema.json.

Usage: cli_schema.py SCHEMA FILE...

Validates SCHEMA itself, then each FILE against it, an "integer" being a JSON
integer (5, not 5.0) as in tests/plan_schema.py.  Prints one line per problem,
naming the file and the place in it.  Exit status 0 when all is well, 1
otherwise, 77 (skip) when python3 has no jsonschema module.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_schema import strict_validator, where  # noqa: E402  (exits 77 without jsonschema)


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        validator = strict_validator(json.load(f))
    bad = 0
    for name in argv[2:]:
        try:
            with open(name) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: %s" % (name, e))
            bad += 1
            continue
        errors = sorted(validator.iter_errors(j), key=lambda e: list(e.absolute_path))
        for e in errors:
            print("%s: %s: %s" % (name, where(e.absolute_path), e.message))
        bad += 1 if errors else 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
