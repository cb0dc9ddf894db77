"""`execeval report` end to end: the page of a real `execeval eval` run of
examples/, rendered in a real browser.

The results come from evaluating examples/tasks.jsonl against
examples/samples.jsonl (every candidate runs through execeval; this file
runs inside the safety net with the rest of tests/e2e). The browser is
Debian's headless Chromium (package chromium, scripts/install-deps); the
tests that need it are skipped, saying so, where it is absent. Chromium
runs with a throwaway profile under tmp_path and a timeout, in its own
process group, which is killed if it hangs.

What is checked: the charts are there and drawn (DOM: each chart's <svg>
holds marks; screenshot: the palette's colours are painted), the sorting
script runs under the page's Content-Security-Policy, the page loads
nothing (no address in it, and a local HTTP server sees no request even
when markup is injected into the page), hostile messages stay text, and
the command's errors (bad line, torn line, --history, missing -o).
"""
import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import threading
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import EXECEVAL, REPO, with_isolation

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium not found (Debian package chromium; scripts/install-deps installs it)")
BROWSER_TIMEOUT = 120

# The charts of every report, and the marks each must hold at least
# (examples/ has 6 classes, 3 models, 5 statuses, 9 details, 45 tasks).
CHARTS = {
    "chart-pass-at-k": 2,   # pass@1 and pass@3 bars
    "chart-classes": 6,
    "chart-models": 3,
    "chart-statuses": 5,
    "chart-details": 5,
    "chart-scores": 10,     # one rect per bin
    "chart-slowest": 10,
    "chart-memory": 10,
}
# Colours of svg.c's marks (html.c's STYLE): bars, pass, assertion_fail, slowest, memory.
PALETTE = {"bar": (0x3b, 0x6f, 0xb6), "pass": (0x2e, 0x8b, 0x57), "assertion_fail": (0xe0, 0x7b, 0x24),
           "slow": (0xd0, 0x8a, 0x2b), "memory": (0x2b, 0x9a, 0x8a)}


def execeval(*args, timeout=600):
    return subprocess.run([EXECEVAL, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """(results path, report path) of one eval of examples/ and its report."""
    d = tmp_path_factory.mktemp("report")
    results = d / "results.jsonl"
    argv = with_isolation([EXECEVAL, "eval", "--tasks", str(REPO / "examples" / "tasks.jsonl"), "--samples",
                           str(REPO / "examples" / "samples.jsonl"), "-j", "2", "-q", "-k", "1,3",
                           "-o", str(results)])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    report = d / "report.html"
    r = execeval("report", results, "-o", report, "-k", "1,3", "--title", "examples <b>")
    assert r.returncode == 0, r.stderr
    return results, report


def run_chromium(args, tmp_path):
    """Runs headless Chromium on args; returns its stdout. Killed (its
    whole process group, by the group's id) when it outlives the timeout."""
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--user-data-dir=%s" % profile, *args]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=BROWSER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("chromium hung for %d s: killed" % BROWSER_TIMEOUT)
    finally:
        try:  # helpers it left behind, if any
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert p.returncode == 0, err.decode("utf-8", "replace")[-3000:]
    return out.decode("utf-8", "replace")


def dump_dom(page, tmp_path):
    return run_chromium(["--dump-dom", page.as_uri()], tmp_path)


class Dom(HTMLParser):
    """What the tests look for in a serialised DOM: each chart's marks, the
    table's rows and links, the ids, scripts, images, handler attributes."""

    MARKS = ("rect", "path", "circle", "line")

    def __init__(self, text):
        super().__init__()
        self.charts, self.ids, self.links, self.tags = {}, set(), [], {}
        self.handlers, self.rows, self.table_attrs, self.title = [], 0, {}, ""
        self._chart, self._depth, self._in_tbody, self._in_title = None, 0, False, False
        self._task_table_done = False  # rows are counted in the task table only
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.handlers += [(tag, k) for k in a if k.startswith("on")]
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("href", "").startswith("#"):
            self.links.append(a["href"][1:])
        if tag == "svg" and "chart" in (a.get("class") or "").split():
            self._chart, self._depth = a.get("id"), 0
            self.charts[self._chart] = {m: 0 for m in self.MARKS}
        elif self._chart is not None:
            if tag in self.MARKS:
                self.charts[self._chart][tag] += 1
        if tag == "svg":
            self._depth += 1
        if tag == "table" and a.get("id") == "task-table":
            self.table_attrs = a
        if tag == "tbody":
            self._in_tbody = self.table_attrs.get("id") == "task-table" and not self._task_table_done
        if tag == "tr" and self._in_tbody:
            self.rows += 1
        self._in_title = tag == "title" and self._chart is None

    def handle_endtag(self, tag):
        if tag == "svg":
            self._depth -= 1
            if self._depth == 0:
                self._chart = None
        if tag == "tbody":
            self._task_table_done |= self._in_tbody
            self._in_tbody = False
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG,
    decoded with zlib (no imaging library)."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if color == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


# ---------------------------------------------------------------------------
# The page itself (no browser needed).


def test_the_page_pins_its_style_and_script_and_names_no_address(example_run):
    _, report = example_run
    html = report.read_text(encoding="utf-8")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert csp, "no CSP meta"
    assert html.index(csp.group(0)) < html.index("<style>"), "the CSP must come before what it governs"
    policy = dict(d.strip().split(" ", 1) for d in csp.group(1).split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "'none'"
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        bodies = re.findall(r"<%s>(.*?)</%s>" % (tag, tag), html, re.S)
        assert len(bodies) == 1, "exactly one <%s>" % tag
        want = "'sha256-%s'" % base64.b64encode(hashlib.sha256(bodies[0].encode()).digest()).decode()
        assert policy[directive] == want, (
            "%s changed: set %s_HASH in src/report/html.c to %s" % (tag, tag.upper(), want[1:-1]))
    for needle in ("http://", "https://", "src=", "url(", "@import", "//cdn", "<link", "<iframe", "<object"):
        assert needle not in html, "the page names %r" % needle
    assert "<title>examples &lt;b&gt;</title>" in html


def test_the_page_agrees_with_metrics(example_run):
    results, report = example_run
    html = report.read_text(encoding="utf-8")
    summary_path = report.with_suffix(".summary.json")
    r = execeval("metrics", results, "-k", "1,3", "--json", summary_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads(summary_path.read_text())
    for k, v in summary["pass_at_k"].items():
        assert "<b>%.3f</b><span>pass@%s" % (v, k) in html
    assert "<b>%d</b><span>tasks" % summary["tasks"] in html
    for status, n in summary["statuses"].items():
        assert ">%s</text>" % status in html and ">%d (" % n in html


# ---------------------------------------------------------------------------
# In the browser.


@needs_chromium
def test_charts_are_drawn_and_the_table_links_to_every_task(example_run, tmp_path):
    _, report = example_run
    dom = Dom(dump_dom(report, tmp_path))
    assert set(dom.charts) == set(CHARTS), sorted(dom.charts)
    for chart, at_least in CHARTS.items():
        marks = dom.charts[chart]
        assert marks["rect"] + marks["path"] >= at_least, (chart, marks)
    assert dom.rows == 45, "one row per task of examples/"
    assert dom.table_attrs.get("data-sort-ready") == "1", "the sorting script did not run under the CSP"
    task_links = [l for l in dom.links if l.startswith("t-")]
    assert len(set(task_links)) == 45
    assert all(l in dom.ids for l in dom.links), [l for l in dom.links if l not in dom.ids]
    assert dom.tags.get("script") == 1 and not dom.tags.get("img") and not dom.handlers


@needs_chromium
def test_the_screenshot_shows_the_charts(example_run, tmp_path):
    _, report = example_run
    shot = tmp_path / "report.png"
    # tall enough for every chart: examples/ holds three models, so pass@k and pass@1 by class
    # have a bar per model (issue 35)
    run_chromium(["--hide-scrollbars", "--window-size=1280,2800", "--screenshot=%s" % shot, report.as_uri()],
                 tmp_path)
    width, height, rows = png_pixels(shot)
    assert (width, height) == (1280, 2800)
    counts = {name: 0 for name in PALETTE}
    colours = set()
    for row in rows[::2]:
        for px in row[::2]:
            colours.add(px)
            for name, rgb in PALETTE.items():
                if all(abs(px[i] - rgb[i]) <= 3 for i in range(3)):
                    counts[name] += 1
    assert len(colours) > 50, "the screenshot is (nearly) uniform"
    # a bar of the charts, sampled every other pixel, is hundreds of pixels
    for name, n in counts.items():
        assert n > 200, "colour of %s barely painted (%d samples): %s" % (name, n, counts)


# ---------------------------------------------------------------------------
# Hostile text and the network.

HOSTILE = [
    '</script><script>document.title="pwned-1"</script>',
    '<svg onload="document.title=\'pwned-2\'"><img src=x onerror="document.title=\'pwned-3\'">',
    '"><script>document.title="pwned-4"</script>',
]


class Counter(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Counter.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    """A local HTTP server that records every request it gets: (url, hits)."""
    Counter.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d" % server.server_address[1], Counter.hits
    server.shutdown()
    server.server_close()


def hostile_results(path, url):
    """Records whose every untrusted string tries to become markup."""
    leak = '<img src="%s/leak-img"><link rel="stylesheet" href="%s/leak-css">' % (url, url)
    recs = []
    for i, h in enumerate(HOSTILE):
        recs.append({"task_id": "t%d%s" % (i, h), "sample": 0, "model": h, "class": h,
                     "status": "assertion_fail", "detail": "test 0 failed: " + h + leak, "score": 0.0,
                     "tests": [{"index": 0, "kind": "call", "tier": h, "visibility": "public",
                                "status": "fail", "message": h + leak}],
                     "stderr": h + leak, "resources": {"wall_ms": 5.0 + i, "peak_rss_kb": 1000}})
    recs.append({"task_id": "se" + HOSTILE[0], "sandbox_error": HOSTILE[1] + leak})
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_hostile_strings_are_escaped_in_the_file(tmp_path):
    results = hostile_results(tmp_path / "r.jsonl", "http://127.0.0.1:9")
    report = tmp_path / "r.html"
    r = execeval("report", results, "-o", report, "--title", HOSTILE[0])
    assert r.returncode == 0, r.stderr
    html = report.read_text(encoding="utf-8")
    assert html.count("<script") == 1
    for bad in ("<svg onload", "<img", "<link", 'document.title="pwned-1"</script>'):
        assert bad not in html, bad
    assert "&lt;/script&gt;&lt;script&gt;document.title=&quot;pwned-1&quot;&lt;/script&gt;" in html


@needs_chromium
def test_hostile_strings_stay_text_in_the_browser_and_nothing_is_fetched(tmp_path, listener):
    url, hits = listener
    results = hostile_results(tmp_path / "r.jsonl", url)
    report = tmp_path / "r.html"
    r = execeval("report", results, "-o", report, "--title", "hostile")
    assert r.returncode == 0, r.stderr
    text = dump_dom(report, tmp_path)
    dom = Dom(text)
    assert dom.title == "hostile", "a candidate's script ran: %r" % dom.title
    assert dom.tags.get("script") == 1 and not dom.tags.get("img") and not dom.tags.get("link")
    assert not dom.handlers, dom.handlers
    assert "pwned" not in dom.title
    assert "document.title=&quot;pwned-1&quot;" in text or 'document.title="pwned-1"' in text
    assert hits == [], "the page made requests: %s" % hits


@needs_chromium
def test_the_csp_blocks_loads_even_if_markup_got_in(example_run, tmp_path, listener):
    """Injects what escaping keeps out (a script, an image, a stylesheet)
    into a copy of the page: with the page's CSP nothing reaches the
    listener; without it (the control) the same page does."""
    url, hits = listener
    _, report = example_run
    html = report.read_text(encoding="utf-8")
    inject = ('<img src="%s/img"><link rel="stylesheet" href="%s/css">'
              '<script>fetch("%s/fetch");document.title="ran"</script>' % (url, url, url))
    guarded = tmp_path / "guarded.html"
    guarded.write_text(html.replace("<main>", "<main>" + inject, 1), encoding="utf-8")
    dom = Dom(dump_dom(guarded, tmp_path))
    assert dom.title == "examples <b>", "an injected script ran under the CSP"
    assert hits == [], "requests despite the CSP: %s" % hits
    control = tmp_path / "control.html"
    control.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                              guarded.read_text(encoding="utf-8")), encoding="utf-8")
    Dom(dump_dom(control, tmp_path))
    assert hits, "the control page made no request: the listener would not have seen one either"


# ---------------------------------------------------------------------------
# The command's errors.


@needs_chromium
def test_history_trend_over_runs_is_drawn(example_run, tmp_path):
    """Two evals stored in a history; the report draws one trend chart per
    series (pass@k, mean score, lint pass rate, timeout rate), each a line
    through one dot per run, in the browser."""
    results, _ = example_run
    db = tmp_path / "h.db"
    for i, extra in enumerate(([], ["--lint"])):
        argv = with_isolation([EXECEVAL, "eval", "--tasks", str(REPO / "examples" / "tasks.jsonl"), "--samples",
                               str(REPO / "examples" / "samples.jsonl"), "-j", "2", "-q", "-k", "1,3",
                               "-o", str(tmp_path / ("r%d.jsonl" % i)), "--history", str(db), *extra])
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
    page = tmp_path / "trend.html"
    r = execeval("report", results, "-o", page, "-k", "1,3", "--history", db)
    assert r.returncode == 0, r.stderr
    dom = Dom(dump_dom(page, tmp_path))
    trend = sorted(c for c in dom.charts if c.startswith("chart-trend-"))
    # pass@1, mean score, timeout rate over two runs; lint only in the second: one point;
    # a line per model (examples/ holds three: issue 35)
    assert set(trend) == {"chart-trend-%d" % i for i in range(12)}, sorted(dom.charts)
    for c in trend:
        assert dom.charts[c]["path"] >= 1 and dom.charts[c]["circle"] >= 1, (c, dom.charts[c])
    text = page.read_text(encoding="utf-8")
    for label in ("pass@1", "mean score", "lint pass rate", "timeout rate"):
        assert label in text, label


def trend_charts(page):
    """{chart title: dots} of the page's trend charts, in page order."""
    text = Path(page).read_text(encoding="utf-8")
    charts = {}
    for m in re.finditer(r'<svg[^>]*id="chart-trend-\d+".*?</svg>', text, re.S):
        title = re.search(r"<title[^>]*>(.*?)</title>", m.group(0), re.S).group(1)
        charts[title] = m.group(0).count('<circle class="dot"')
    return charts


def test_history_trends_never_join_two_data_sets(tmp_path):
    """Two runs on the bundled tasks, one on another tasks file (same ids,
    other bytes): one chart per data set and series, the reported results'
    own data set first, and no line through the three runs."""
    # The examples' first 12 tasks (48 samples, all three models): which
    # runs a chart joins is told by the tasks file, not by how many it holds.
    examples = REPO / "examples"
    rows = (examples / "tasks.jsonl").read_text().splitlines(keepends=True)[:12]
    ids = {json.loads(row)["task_id"] for row in rows}
    db, tasks, samples = tmp_path / "h.db", tmp_path / "tasks.jsonl", tmp_path / "samples.jsonl"
    tasks.write_text("".join(rows))
    samples.write_text("".join(line for line in (examples / "samples.jsonl").read_text().splitlines(keepends=True)
                               if json.loads(line)["task_id"] in ids))
    other = tmp_path / "tasks-v2.jsonl"
    other.write_text(tasks.read_text() + "\n")
    sha = lambda p: hashlib.sha256(Path(p).read_bytes()).hexdigest()[:8]
    for i, t in enumerate((tasks, other, tasks)):
        argv = with_isolation([EXECEVAL, "eval", "--tasks", str(t), "--samples", str(samples), "-j", "2", "-q",
                               "-k", "1", "-o", str(tmp_path / ("r%d.jsonl" % i)), "--history", str(db)])
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
    page = tmp_path / "trend.html"
    r = execeval("report", tmp_path / "r1.jsonl", "-o", page, "-k", "1", "--history", db)
    assert r.returncode == 0, r.stderr
    mine, theirs = "tasks-v2.jsonl@" + sha(other), "tasks.jsonl@" + sha(tasks)
    charts = trend_charts(page)
    models = ("demo-bad", "demo-good", "demo-mediocre")  # examples/ holds three: a line per model (issue 35)
    assert sorted(charts) == sorted("%s on %s, model %s" % (m, d, model) for d in (mine, theirs)
                                    for model in models for m in ("pass@1", "mean score", "timeout rate")), charts
    assert all(title.endswith(mine.join(("", ", model " + title.split(", model ")[1])))
               for title in list(charts)[:9]), "the reported results' own data set first"
    assert [charts["pass@1 on %s, model %s" % (d, model)] for d in (mine, theirs) for model in models] \
        == [1, 1, 1, 2, 2, 2], charts
    assert "runs on different tasks or of different models are never joined" in page.read_text(encoding="utf-8")


def test_a_bad_line_names_file_and_line(example_run, tmp_path):
    results, _ = example_run
    lines = results.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n")
    r = execeval("report", bad, "-o", tmp_path / "x.html")
    assert r.returncode == 2
    assert "%s:4: invalid JSON" % bad in r.stderr, r.stderr
    assert not (tmp_path / "x.html").exists(), "no page from a bad file"


def test_a_torn_last_line_is_skipped_with_a_warning(example_run, tmp_path):
    results, _ = example_run
    torn = tmp_path / "torn.jsonl"
    torn.write_text(results.read_text() + '{"task_id": "ex/x", "sam')
    r = execeval("report", torn, "-o", tmp_path / "t.html", "-k", "1")
    assert r.returncode == 0, r.stderr
    assert "skipped the last line" in r.stderr
    assert "172 records" in (tmp_path / "t.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("args, message", [
    (["--history", "missing.db", "-o", "x.html"], "missing.db"),
    ([], "-o REPORT.html is required"),
    (["-o", "x.html", "-k", "0"], "-k: expected comma-separated positive integers"),
    (["-o", "x.html", "--bogus"], "unknown option"),
])
def test_usage_errors_exit_2(example_run, tmp_path, args, message):
    results, _ = example_run
    r = subprocess.run([EXECEVAL, "report", str(results), *args], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "x.html").exists()


def test_a_data_set_without_classes_has_no_class_panel(tmp_path):
    """`eval` of HumanEval-like tasks (no `class`) then `report`: the
    "pass@1 by class" panel was half a screen with one bar, "(no class)";
    without classes the page has no such panel and no link to it."""
    task = {"task_id": "t/sq", "entry_point": "sq", "tests": [{"kind": "assert", "code": "assert sq(3) == 9"}]}
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps(task) + "\n" + json.dumps(dict(task, task_id="t/sq2")) + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({"task_id": t, "code": "def sq(x):\n    return x * x\n"}) + "\n"
                               for t in ("t/sq", "t/sq2")))
    results = tmp_path / "r.jsonl"
    r = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples),
                                       "-o", str(results), "-q", "--no-history"]),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = execeval("report", results, "-o", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "pass@1 by class" not in html and 'id="chart-classes"' not in html, html
    assert 'href="#classes"' not in html and "(no class)" not in html
    assert 'id="chart-statuses"' in html  # the rest of the page is there
    # one class is a class: its panel stays
    tasks.write_text("".join(json.dumps(dict(task, task_id=t, **{"class": "math"})) + "\n"
                             for t in ("t/sq", "t/sq2")))
    r = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples),
                                       "-o", str(tmp_path / "r2.jsonl"), "-q", "--no-history"]),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = execeval("report", tmp_path / "r2.jsonl", "-o", tmp_path / "r2.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r2.html").read_text(encoding="utf-8")
    assert 'id="chart-classes"' in html and 'href="#classes"' in html
