#!/usr/bin/env python3
"""Check that the Grafana dashboards here only query metrics autoprof exposes.

    curl -s localhost:9740/metrics > metrics.txt     # with --otlp.endpoint set, so the
    python3 dashboards/check.py metrics.txt          # autoprof_otlp_* families appear too

Loads every dashboards/*.json (or the files given after the metrics file), takes every PromQL
`expr` of every panel (rows' nested panels included) and the `label_values(METRIC, label)`
queries of template variables, and checks that each metric name they use is a sample name in
the /metrics text (so histogram series are `..._bucket`, counters `..._total`). Also checks
that each function called is a PromQL function. A developer's tool, stdlib only; exit status 1
on any problem.
"""
import glob
import json
import os
import re
import sys

FUNCTIONS = {
    "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
    "avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh",
    "count_over_time", "days_in_month", "day_of_month", "day_of_week", "day_of_year", "deg",
    "delta", "deriv", "exp", "floor", "histogram_avg", "histogram_count", "histogram_fraction",
    "histogram_quantile", "histogram_stddev", "histogram_stdvar", "histogram_sum",
    "holt_winters", "double_exponential_smoothing", "hour", "idelta", "increase", "irate",
    "label_join", "label_replace", "last_over_time", "ln", "log10", "log2",
    "mad_over_time", "max_over_time", "min_over_time", "minute", "month", "pi",
    "predict_linear", "present_over_time", "quantile_over_time", "rad", "rate", "resets",
    "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_desc", "sort_by_label",
    "sort_by_label_desc", "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time",
    "tan", "tanh", "time", "timestamp", "vector", "year",
    # aggregation operators (may be written as calls)
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile", "limitk", "limit_ratio",
}
KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "atan2", "inf", "nan", "start", "end",
}
IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_names(expr):
    """Returns (metrics, functions) used by a PromQL expression."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)  # strings
    s = re.sub(r"\$\{[^}]*\}|\$\w+", "", s)  # Grafana variables ($__rate_interval, ${x})
    s = re.sub(r"\{[^}]*\}", "{}", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", "[]", s)  # ranges and subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", s)
    s = re.sub(r"(?<![\w.])(\d+\.?\d*|\.\d+)(e[+-]?\d+)?[smhdwy]*\b", "0", s, flags=re.I)
    metrics, functions = set(), set()
    for m in IDENT.finditer(s):
        name, rest = m.group(0), s[m.end():].lstrip()
        if rest.startswith("(") or re.match(r"(by|without)\b", rest):  # call, aggregation
            if name not in KEYWORDS:
                functions.add(name)
        elif name.lower() not in KEYWORDS:
            metrics.add(name)
    return metrics, functions


def exposed_names(path):
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                names.add(re.match(r"[^{\s]+", line).group(0))
    return names


def walk_panels(panels):
    for p in panels or []:
        yield p
        yield from walk_panels(p.get("panels"))


def queries(dash):
    """Yields (where, promql) for every Prometheus query of a dashboard."""
    for p in walk_panels(dash.get("panels")):
        for t in p.get("targets") or []:
            if "expr" in t:
                yield "panel %r %s" % (p.get("title"), t.get("refId")), t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if isinstance(q, str) and v.get("datasource", {}).get("type") == "prometheus":
            m = re.fullmatch(r"\s*label_values\(\s*(.*?)\s*,\s*\w+\s*\)\s*", q)
            if m:
                yield "variable %r" % v["name"], m.group(1)
            elif not re.fullmatch(r"\s*label_(names|values)\(\s*\w*\s*\)\s*", q):
                yield "variable %r" % v["name"], re.sub(r"^query_result\((.*)\)$", r"\1", q)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0] + "\nusage: check.py METRICS_FILE [DASHBOARD.json...]",
              file=sys.stderr)
        return 2
    exposed = exposed_names(argv[1])
    files = argv[2:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.json")))
    problems = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
        nq, used = 0, set()
        ids = [p.get("id") for p in walk_panels(dash.get("panels"))]
        if len(ids) != len(set(ids)):
            print("%s: duplicate panel ids" % path)
            problems += 1
        for where, expr in queries(dash):
            nq += 1
            metrics, functions = metric_names(expr)
            used |= metrics
            for name in sorted(metrics - exposed):
                print("%s: %s: unknown metric %s in: %s" % (path, where, name, expr))
                problems += 1
            for name in sorted(functions - FUNCTIONS):
                print("%s: %s: unknown function %s in: %s" % (path, where, name, expr))
                problems += 1
        print("%s: %d PromQL queries, %d metric names%s" % (
            os.path.basename(path), nq, len(used), (": " + " ".join(sorted(used))) if used else ""))
    print("%d problem(s); %d metric names in %s" % (problems, len(exposed), argv[1]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
