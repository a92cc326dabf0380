#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_readme.sh: README.md's examples are what the CLI prints.
#
# An example is a line "$ dtplan ARGS..." inside a ``` block, followed by
# the output it shows, up to the next "$ " line or the block's end (blank
# lines at the end dropped).  The command is run with the built dtplan
# (ARGS split as a shell would, without a shell) and must exit 0.  A line
# "..." in the shown output leaves lines out: the lines before the first
# "..." must be the output's first lines, each later run of lines must come
# next in the output, in order, and a run after the last "..." (or the whole
# shown output, without one) must end the output.  Lines are compared
# without trailing blanks.
#
# DTPLAN_UPDATE_GOLDEN=1 first rewrites README.md's shown output from the
# CLI: the first run takes as many of the output's first lines, the last as
# many of its last; a run between two "..." lines is left, and still checked.
#
# Exit status: 0 every example is current (or README.md was rewritten),
# 1 one is not or none was found, 77 (skip) without python3.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v python3 >/dev/null 2>&1 || { echo "check_readme: no python3, skipped"; exit 77; }

exec python3 - "$top_srcdir/README.md" "$top_builddir/cli/dtplan" <<'EOF'
import os, shlex, subprocess, sys

readme, dtplan = sys.argv[1], sys.argv[2]
update = os.environ.get("DTPLAN_UPDATE_GOLDEN") == "1"
lines = open(readme, encoding="utf-8").read().split("\n")

# (index of the "$ dtplan" line, first shown line, end of shown lines)
examples, fence, i = [], False, 0
while i < len(lines):
    if lines[i].startswith("```"):
        fence = not fence
    elif fence and lines[i].startswith("$ dtplan "):
        j = i + 1
        while j < len(lines) and not lines[j].startswith("$ ") and not lines[j].startswith("```"):
            j += 1
        end = j
        while end > i + 1 and lines[end - 1].strip() == "":
            end -= 1
        examples.append((i, i + 1, end))
        i = j
        continue
    i += 1
if not examples:
    print("check_readme: %s has no \"$ dtplan\" example" % readme)
    sys.exit(1)

def runs(shown):
    """The shown lines cut at each "..." line."""
    out, cur = [], []
    for l in shown:
        if l.strip() == "...":
            out.append(cur)
            cur = []
        else:
            cur.append(l.rstrip())
    out.append(cur)
    return out

def check(shown, got):
    """None when shown matches got, else what differs."""
    parts = runs(shown)
    if len(parts) == 1:
        return None if parts[0] == got else "the output differs"
    if got[: len(parts[0])] != parts[0]:
        return "its first %d lines differ" % len(parts[0])
    at = len(parts[0])
    for k, p in enumerate(parts[1:], 1):
        if not p:
            continue
        last = k == len(parts) - 1
        if last:
            if len(got) - len(p) < at or got[len(got) - len(p):] != p:
                return "its last %d lines differ" % len(p)
            continue
        for s in range(at, len(got) - len(p) + 1):
            if got[s : s + len(p)] == p:
                at = s + len(p)
                break
        else:
            return "the lines from '%s' are not in it" % p[0]
    return None

def rewrite(shown, got):
    """shown with its first and last runs taken from got; its "..." lines kept."""
    parts = runs(shown)
    if len(parts) == 1:
        return got
    dots = [l for l in shown if l.strip() == "..."]
    new = got[: len(parts[0])]
    for k, p in enumerate(parts[1:], 1):
        new.append(dots[k - 1])
        if k == len(parts) - 1 and p:
            new += got[len(got) - len(p):]
        else:
            new += p
    return new

status, changed = 0, False
for at, first, end in reversed(examples):
    cmd = lines[at][2:]
    argv = shlex.split(cmd)
    argv[0] = dtplan
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = [l.rstrip() for l in r.stdout.split("\n")]
    while got and got[-1] == "":
        got.pop()
    if r.returncode != 0:
        print("not ok - README.md:%d: '%s' exited %d: %s" % (at + 1, cmd, r.returncode, r.stderr.strip()))
        status = 1
        continue
    shown = lines[first:end]
    if update:
        new = rewrite(shown, got)
        if new != shown:
            lines[first:end] = new
            changed = True
            shown = new
    why = check(shown, got)
    if why is None:
        print("ok - README.md:%d: '%s' shows what it prints" % (at + 1, cmd))
    else:
        print("not ok - README.md:%d: '%s': %s; it prints:" % (at + 1, cmd, why))
        for l in got[:40]:
            print("#   " + l)
        status = 1
if changed:
    open(readme, "w", encoding="utf-8").write("\n".join(lines))
sys.exit(status)
EOF
