#!/usr/bin/python3
"""Verify the bundled example set (examples/tasks.jsonl, examples/samples.jsonl).

Every sample is evaluated through `build/execeval run` -- never with python
directly, since some samples are hostile on purpose -- against its task
written to a temporary file, and the record's status is compared with the
sample's "expect" field (and its detail with "expect_detail", a prefix, when
the sample has one). A sample's program is composed as `execeval eval` does
it: "completion" is prompt + completion (--extract none), "generation" is the
free-form reply (--extract auto), "code" is the program as is (--extract none).

It also checks the data set's shape: unique task ids, the fields of each task,
3 to 6 samples per task with at least one expected to pass, and that all five
test kinds, both visibilities, all three tiers, weights, setup and limits
occur somewhere. It prints one line per task with the status of each of its
samples (a "!" marks a status other than the expected one), then counts and
the time taken. Exit status: 0 when everything matched, 1 otherwise, 2 on a
usage error or when execeval could not evaluate a sample.

With --eval the selected samples go through one `execeval eval` instead (the
way `make demo` runs the set), and the records are matched to the samples by
(task_id, sample index); this also checks that eval copies the samples'
extra fields ("expect") into the records.

Fields of a sample beyond the contract's, kept by execeval and copied to the
record: "expect" (the status the sample is written to get), "expect_detail"
(a prefix of the record's detail, for hostile samples) and "note" (what is
wrong with it, for people reading the file).

    /usr/bin/python3 examples/check.py [-j 2] [--eval] [--execeval build/execeval] [--task SUBSTRING] [-v]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
STATUSES = ("pass", "assertion_fail", "syntax_error", "timeout", "error")
SHORT = {"pass": "pass", "assertion_fail": "fail", "syntax_error": "syntax",
         "timeout": "timeout", "error": "error"}
KINDS = ("assert", "io", "call", "program", "unittest")
TIERS = ("canonical", "edge", "property")
CLASSES = ("strings", "math", "data-structures", "parsing", "io", "algorithms")
MODELS = ("demo-good", "demo-mediocre", "demo-bad")
FORMS = ("completion", "generation", "code")


def read_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as e:
                sys.exit("%s:%d: not JSON: %s" % (path, n, e))
    return rows


def shape_problems(tasks, samples):
    """What is wrong with the data set itself, as a list of messages."""
    problems = []
    ids = [t.get("task_id") for t in tasks]
    for tid, n in collections.Counter(ids).items():
        if n > 1:
            problems.append("%s: %d tasks with this id" % (tid, n))
    by_task = collections.defaultdict(list)
    for s in samples:
        by_task[s.get("task_id")].append(s)
    for tid in by_task:
        if tid not in ids:
            problems.append("%s: samples for an unknown task" % tid)
    for t in tasks:
        tid = t.get("task_id")
        if not str(tid).startswith("ex/"):
            problems.append("%s: task_id does not start with ex/" % tid)
        for field in ("class", "prompt", "entry_point", "tests"):
            if not t.get(field):
                problems.append("%s: no %s" % (tid, field))
        if t.get("class") not in CLASSES:
            problems.append("%s: class %r not one of %s" % (tid, t.get("class"), ", ".join(CLASSES)))
        mine = by_task.get(tid, [])
        if not 3 <= len(mine) <= 6:
            problems.append("%s: %d samples (want 3 to 6)" % (tid, len(mine)))
        if not any(s.get("expect") == "pass" for s in mine):
            problems.append("%s: no sample expected to pass" % tid)
    for i, s in enumerate(samples):
        where = "samples line %d (%s)" % (i + 1, s.get("task_id"))
        forms = [f for f in FORMS if f in s]
        if len(forms) != 1:
            problems.append("%s: want exactly one of %s" % (where, ", ".join(FORMS)))
        if s.get("expect") not in STATUSES:
            problems.append("%s: expect %r not one of %s" % (where, s.get("expect"), ", ".join(STATUSES)))
        if s.get("model") not in MODELS:
            problems.append("%s: model %r not one of %s" % (where, s.get("model"), ", ".join(MODELS)))
    tests = [x for t in tasks for x in t.get("tests", [])]
    wanted = [("kind", k) for k in KINDS] + [("tier", k) for k in TIERS] + \
             [("visibility", v) for v in ("public", "hidden")]
    defaults = {"tier": "canonical", "visibility": "public"}
    for field, value in wanted:
        if not any(x.get(field, defaults.get(field)) == value for x in tests):
            problems.append("no test with %s %s" % (field, value))
    if not any(x.get("weight", 1.0) != 1.0 for x in tests):
        problems.append("no test with a weight other than 1")
    if not any(t.get("setup") for t in tasks):
        problems.append("no task with setup")
    if not any(t.get("limits") for t in tasks):
        problems.append("no task with limits")
    return problems


def program_of(task, sample):
    """(candidate text, --extract mode) for one sample."""
    if "completion" in sample:
        return task.get("prompt", "") + sample["completion"], "none"
    if "generation" in sample:
        return sample["generation"], "auto"
    return sample["code"], "none"


def evaluate(execeval, task, sample, workdir, index):
    """Runs one sample through execeval run; returns (record or None, error text, seconds)."""
    text, mode = program_of(task, sample)
    task_path = os.path.join(workdir, "task-%d.json" % index)
    cand_path = os.path.join(workdir, "candidate-%d.txt" % index)
    with open(task_path, "w", encoding="utf-8") as f:
        json.dump(task, f)
    with open(cand_path, "w", encoding="utf-8") as f:
        f.write(text)
    argv = [execeval, "run", "--task", task_path, "--extract", mode, cand_path]
    if sample.get("model"):
        argv[2:2] = ["--model", sample["model"]]
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "execeval itself did not finish in 120 s", time.monotonic() - start
    except OSError as e:
        return None, "cannot run %s: %s" % (execeval, e), time.monotonic() - start
    took = time.monotonic() - start
    if proc.returncode not in (0, 1):
        return None, "execeval exited %d: %s" % (proc.returncode, proc.stderr.strip()), took
    try:
        record = json.loads(proc.stdout)
    except ValueError:
        return None, "execeval printed no record: %r" % proc.stdout[:200], took
    want_code = 0 if record.get("status") == "pass" else 1
    if proc.returncode != want_code:
        return record, "exit code %d for status %s" % (proc.returncode, record.get("status")), took
    return record, None, took


def evaluate_all(execeval, tasks, jobs, workdir, jobs_n, verbose):
    """--eval: the selected samples through one `execeval eval`; {index: (record, error, seconds)}."""
    tasks_path = os.path.join(workdir, "tasks.jsonl")
    samples_path = os.path.join(workdir, "samples.jsonl")
    out = os.path.join(workdir, "results.jsonl")
    with open(tasks_path, "w", encoding="utf-8") as f:
        for t in tasks:
            f.write(json.dumps(t) + "\n")
    keys, seen = {}, collections.Counter()
    with open(samples_path, "w", encoding="utf-8") as f:
        for i, s in jobs:
            keys[(s["task_id"], seen[s["task_id"]])] = i  # a sample's index: its position in its task
            seen[s["task_id"]] += 1
            f.write(json.dumps(s) + "\n")
    argv = [execeval, "eval", "--tasks", tasks_path, "--samples", samples_path, "-o", out,
            "-j", str(jobs_n), "-q", "-k", "1"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {i: (None, "execeval eval: %s" % e, 0.0) for i, _ in jobs}
    if verbose:
        print(proc.stdout)
    if proc.returncode != 0:
        why = "execeval eval exited %d: %s" % (proc.returncode, proc.stderr.strip()[-500:])
        return {i: (None, why, 0.0) for i, _ in jobs}
    results = {i: (None, "no record from execeval eval", 0.0) for i, _ in jobs}
    for record in read_jsonl(out):
        i = keys.get((record.get("task_id"), record.get("sample")))
        if i is None:
            continue
        error = None
        if record.get("expect") != dict(jobs)[i].get("expect"):
            error = "the record did not keep the sample's extra field expect"
        wall = (record.get("resources") or {}).get("wall_ms") or 0.0
        results[i] = (record, error, wall / 1000.0)
    return results


def verdict(sample, record, error):
    """None when the record is what the sample expects, else why not."""
    if record is None:
        return error
    status, detail = record.get("status"), record.get("detail") or ""
    if status != sample["expect"]:
        return "expected %s, got %s (%s)" % (sample["expect"], status, detail)
    want = sample.get("expect_detail")
    if want and not detail.startswith(want):
        return "expected detail %r, got %r" % (want, detail)
    if status == "pass" and record.get("score") != 1.0:
        return "pass with score %r" % record.get("score")
    return error


def counts_table(title, counter, order=None):
    keys = order or sorted(counter)
    cells = ["%s %d" % (k, counter[k]) for k in keys if counter[k]]
    return "  %-13s %s" % (title + ":", ", ".join(cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--execeval", default=os.environ.get("EXECEVAL") or os.path.join(REPO, "build", "execeval"))
    ap.add_argument("--tasks", default=os.path.join(HERE, "tasks.jsonl"))
    ap.add_argument("--samples", default=os.path.join(HERE, "samples.jsonl"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--task", help="only tasks whose id contains this")
    ap.add_argument("--eval", action="store_true",
                    help="evaluate through one `execeval eval` run instead of `execeval run` per sample")
    ap.add_argument("-v", "--verbose", action="store_true", help="the detail of every sample")
    args = ap.parse_args()
    if not os.access(args.execeval, os.X_OK):
        print("check.py: no execeval at %s (run make all)" % args.execeval, file=sys.stderr)
        return 2

    tasks = read_jsonl(args.tasks)
    samples = read_jsonl(args.samples)
    problems = shape_problems(tasks, samples)
    by_id = {t["task_id"]: t for t in tasks}
    if args.task:
        tasks = [t for t in tasks if args.task in t["task_id"]]
    wanted_ids = {t["task_id"] for t in tasks}
    jobs = [(i, s) for i, s in enumerate(samples) if s.get("task_id") in wanted_ids]

    start = time.monotonic()
    results = {}
    with tempfile.TemporaryDirectory(prefix="execeval-check-") as workdir:
        if args.eval:
            results = evaluate_all(args.execeval, tasks, jobs, workdir, args.jobs, args.verbose)
        else:
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                futures = {pool.submit(evaluate, args.execeval, by_id[s["task_id"]], s, workdir, i): i
                           for i, s in jobs}
                for fut in concurrent.futures.as_completed(futures):
                    results[futures[fut]] = fut.result()
    wall = time.monotonic() - start

    mismatches, hard_errors = [], 0
    per_task = collections.defaultdict(list)
    for i, s in jobs:
        record, error, took = results[i]
        why = verdict(s, record, error)
        if record is None:
            hard_errors += 1
        if why:
            mismatches.append((i, s, why))
        per_task[s["task_id"]].append((i, s, record, why, took))

    width = max([len(t["task_id"]) for t in tasks] + [8])
    print("%-*s  %-15s  %s" % (width, "task", "class", "samples (status per sample, ! = not the expected one)"))
    for t in tasks:
        cells = []
        for i, s, record, why, took in per_task[t["task_id"]]:
            status = SHORT.get(record.get("status"), "?") if record else "ERR"
            cells.append("%-8s" % (status + ("!" if why else "")))
        print("%-*s  %-15s  %s" % (width, t["task_id"], t.get("class", ""), " ".join(cells).rstrip()))
        if args.verbose:
            for i, s, record, why, took in per_task[t["task_id"]]:
                form = next(f for f in FORMS if f in s)
                detail = (record or {}).get("detail")
                score = (record or {}).get("score")
                print("    #%-3d %-13s %-10s expect %-14s score %-5s %.2fs  %s" % (
                    i + 1, s.get("model"), form, s["expect"],
                    "-" if score is None else "%.2f" % score, took, detail or ""))

    tests = [x for t in tasks for x in t["tests"]]
    sel = [s for _, s in jobs]
    records = [results[i][0] for i, _ in jobs if results[i][0]]
    partial = sum(1 for r in records if 0 < (r.get("score") or 0) < 1)
    print()
    print("%d tasks, %d tests, %d samples" % (len(tasks), len(tests), len(sel)))
    print(counts_table("classes", collections.Counter(t["class"] for t in tasks), CLASSES))
    print(counts_table("test kinds", collections.Counter(x["kind"] for x in tests), KINDS))
    print(counts_table("tiers", collections.Counter(x.get("tier", "canonical") for x in tests), TIERS))
    print(counts_table("visibility", collections.Counter(x.get("visibility", "public") for x in tests)))
    print(counts_table("weights", collections.Counter(str(x.get("weight", 1.0)) for x in tests)))
    print(counts_table("tasks with", collections.Counter(
        k for t in tasks for k in ("setup", "limits") if t.get(k))))
    print(counts_table("sample forms", collections.Counter(next(f for f in FORMS if f in s) for s in sel), FORMS))
    print(counts_table("models", collections.Counter(s.get("model") for s in sel), MODELS))
    print(counts_table("expected", collections.Counter(s["expect"] for s in sel), STATUSES))
    print(counts_table("got", collections.Counter(r.get("status") for r in records), STATUSES))
    print("  partially right (0 < score < 1): %d" % partial)
    print("time: %.1f s wall through %s with -j %d (%.1f s of sandbox wall time)" % (
        wall, "execeval eval" if args.eval else "execeval run", args.jobs,
        sum(results[i][2] for i, _ in jobs)))

    for p in problems:
        print("data set: " + p)
    for i, s, why in mismatches:
        print("MISMATCH samples line %d (%s, %s): %s" % (i + 1, s["task_id"], s.get("model"), why))
    if hard_errors:
        return 2
    if mismatches or problems:
        return 1
    print("OK: every sample got the status it expects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
