#!/bin/sh
# demo.sh - evaluates the bundled data set (examples/tasks.jsonl against
# examples/samples.jsonl) and prints the summary, then a few single candidates
# against examples/tasks/add.json with what execeval reports for each.
# The run is stored in build/demo-history.db (not the default history in
# your home), which `execeval history` then lists: run the demo twice to
# see a trend. Run by `make demo`.
set -u
cd "$(dirname "$0")/.."
EE=./build/execeval
PY=/usr/bin/python3
TASK=examples/tasks/add.json

summary() {
	$PY -c '
import json, sys
r = json.loads(sys.stdin.read())
print("  status=%-15s detail=%s" % (r["status"], r["detail"]))
print("  score=%.3f passed=%d/%d reward=%+d wall=%.0fms cpu=%.0fms" % (
    r["score"], r["passed"], r["total"], r["reward"], r["resources"]["wall_ms"], r["resources"]["cpu_ms"]))
for t in r["tests"]:
    print("    test %d %-8s %-6s %-7s %s" % (t["index"], t["kind"], t["visibility"], t["status"], t["message"] or ""))
'
}

$EE doctor || exit 3
echo
echo "== the bundled data set: $(wc -l < examples/tasks.jsonl) tasks, $(wc -l < examples/samples.jsonl) samples, 2 sandboxes at once"
$EE eval --tasks examples/tasks.jsonl --samples examples/samples.jsonl -j 2 -k 1,3 \
	-o examples/samples.results.jsonl --force --summary-json examples/summary.json \
	--history build/demo-history.db || exit $?
echo "(records: examples/samples.results.jsonl; summary: examples/summary.json)"
echo
echo "== the runs stored in build/demo-history.db (execeval history --db build/demo-history.db)"
$EE history --db build/demo-history.db --limit 5 || exit $?
echo
echo "== single candidates against examples/tasks/add.json"
for cand in correct.py wrong.py generation.md hostile_escape.py; do
	echo "== $cand"
	$EE run --task "$TASK" "examples/candidates/$cand" | summary
done
echo
echo "== the whole record of the hostile candidate:"
$EE run --task "$TASK" examples/candidates/hostile_escape.py | $PY -m json.tool
echo
echo "== one-off asserts on standard input:"
printf 'def sq(x):\n    return x * x\n' | $EE run --assert 'assert sq(3) == 9' --assert 'assert sq(-2) == 4' - | summary
exit 0
