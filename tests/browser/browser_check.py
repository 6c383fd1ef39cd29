#!/usr/bin/env python3
"""Loads a `streamhaz report` page in headless Chromium and checks the rendered DOM.

  browser_check.py --streamhaz BIN --trace DIR --out DIR [--hostile] [--screenshot PNG]

The findings to look for come from `streamhaz check --format json` on the same traces. The
rendered page must show every finding's title, draw the timeline, and outline the focused
(first) finding's two operations and its missing-order arrow. With --hostile, nothing the
trace names hold may run or become markup. Exit 0 pass, 1 fail, 77 skipped: Chromium is not
installed and CI is not set (scripts/setup.sh installs Debian's chromium; on CI it must run).
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def find_chromium():
    for name in (os.environ.get("STREAMHAZ_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def chromium(browser, *args):
    with tempfile.TemporaryDirectory(prefix="streamhaz-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
               f"--user-data-dir={profile}", "--window-size=1400,1000", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def attrs(tag):
    return dict(re.findall(r'([\w:-]+)="([^"]*)"', tag))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streamhaz", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--screenshot")
    a = ap.parse_args()

    browser = find_chromium()
    if not browser:
        if os.environ.get("CI") == "true":
            print("FAIL: chromium is not installed (scripts/setup.sh installs it); CI=true requires this test")
            return 1
        print("SKIP: chromium is not installed (run scripts/setup.sh)")
        return SKIP

    os.makedirs(a.out, exist_ok=True)
    page = os.path.join(a.out, "report.html")
    r = subprocess.run([a.streamhaz, "report", a.trace, "-o", page, "--force"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: streamhaz report exited {r.returncode}: {r.stderr}")
        return 1
    r = subprocess.run([a.streamhaz, "check", a.trace, "--format", "json", "--fail-on", "none"], capture_output=True)
    findings = json.loads(r.stdout.decode("utf-8", errors="replace"))["findings"]
    if not findings:
        print("FAIL: the trace has no findings to look for")
        return 1

    url = "file://" + os.path.abspath(page)
    dom = chromium(browser, "--dump-dom", url).stdout
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    expect('data-timeline="drawn"' in dom, "the timeline script did not run to the end (no body[data-timeline=drawn])")
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    want_title = f"streamhaz report: {len(findings)} finding" + ("" if len(findings) == 1 else "s")
    expect(title and title.group(1) == want_title, f"page title {title.group(1) if title else None!r}, expected {want_title!r}")
    expect("PWNED" not in (title.group(1) if title else ""), "a trace name ran as script (title changed)")
    # Serialised DOM text escapes < and >: these can only come from real elements or attributes.
    expect(not re.search(r"<[^>]*PWNED", dom) and "<b>bold" not in dom and "<style>*" not in dom,
           "a trace name became markup")
    expect(not re.search(r"<[^>]*\s(onerror|onload)=", dom), "a trace name became an event-handler attribute")
    for f in findings:
        shown = html.escape(f["title"], quote=False)
        expect(shown in dom or f["title"].isascii() is False, f"finding title {f['title']!r} not shown")

    rects = [attrs(t) for t in re.findall(r"<rect\b[^>]*>", dom)]
    first = findings[0]
    for op in (first["first"], first["second"]):
        ref = f"{op['rank']}:{op['seq']}"
        hit = [x for x in rects if x.get("data-op") == ref and "race" in x.get("class", "").split()]
        expect(hit, f"the finding's operation rank {op['rank']} seq {op['seq']} is not highlighted in the timeline")
    paths = [attrs(t) for t in re.findall(r"<path\b[^>]*>", dom)]
    expect(any(p.get("class") == "missing" and p.get("data-finding") == "0" for p in paths),
           "no missing-order arrow for the first finding")
    expect(any("op" in x.get("class", "").split() and "race" not in x.get("class", "") for x in rects),
           "no ordinary operation bars drawn")
    if a.hostile:
        expect("&lt;/script&gt;&lt;script&gt;document.title='PWNED'" in dom, "the hostile kernel name is not shown as text")

    if a.screenshot:
        if os.path.exists(a.screenshot):
            os.remove(a.screenshot)
        chromium(browser, f"--screenshot={os.path.abspath(a.screenshot)}", url)
        ok = os.path.exists(a.screenshot) and open(a.screenshot, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        expect(ok and os.path.getsize(a.screenshot) > 10000, "no screenshot (or a blank one) was written")

    for m in failures:
        print("FAIL:", m)
    if failures:
        print(f"(page: {page})")
        return 1
    print(f"ok: {len(findings)} findings shown, operations highlighted, timeline drawn ({len(rects)} rects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
