#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_prometheus.sh: what etc/ gives Prometheus and Grafana (issue
# 35) passes promtool: the scrape job (check config), the alert rules
# (check rules) and their unit tests (test rules,
# tests/prometheus-rules-test.yml); the Grafana dashboard is JSON whose
# every query is PromQL promtool parses (each checked as a recording rule)
# over series the collector answers (serve/serve_view.c names them).
#
# Exit 77 (skip) without promtool (Debian: the prometheus package).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v promtool >/dev/null 2>&1 || { echo "SKIP: no promtool"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
check() {
	n=$((n + 1))
	if "$@" >"$tmp/out" 2>&1; then echo "ok $n - $*"
	else echo "not ok $n - $*"; sed 's/^/# /' "$tmp/out"; fail=1; fi
}

check promtool check config --syntax-only "$top_srcdir/etc/prometheus-dtplan.yml"
check promtool check rules "$top_srcdir/etc/prometheus-dtplan-rules.yml"
check promtool test rules "$top_srcdir/tests/prometheus-rules-test.yml"

if command -v python3 >/dev/null 2>&1; then
	# the dashboard's queries, Grafana's variables given values, as recording rules
	check python3 - "$top_srcdir/etc/grafana-dtplan.json" "$tmp/dashboard-rules.yml" \
		"$top_srcdir/serve/serve_view.c" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["uid"] and d["title"] and d["panels"], "a dashboard has a uid, a title, panels"
src = open(sys.argv[3]).read()
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
assert exprs, "no queries"
out = ["groups:", "  - name: dashboard", "    rules:"]
for i, e in enumerate(exprs):
    for name in set(re.findall(r"\bdtplan_[a-z_]+", e)):
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert '"%s' % base in src, "%s: the collector has no series %s" % (sys.argv[1], name)
    e = e.replace("$__rate_interval", "5m").replace("$instance", ".*").replace("$job", "dtplan")
    out += ["      - record: dashboard_query_%d" % i, "        expr: %s" % json.dumps(e)]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
	check promtool check rules "$tmp/dashboard-rules.yml"
else
	echo "# skipped: the dashboard's queries need python3"
fi
echo "1..$n"
exit $fail
