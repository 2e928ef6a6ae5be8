#!/usr/bin/env python3
"""Runs lit over the given suites, then pytest over the Python tests, and ends
with one summary line.

lit and pytest print their own counts; CI and people both want a single
closing line of the form "check: N passed, N failed, N skipped". Where the
build has no Python environment with torch, the Python tests count as one
skipped suite, with the reason.
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lit", required=True, help="path to lit or lit.py")
    parser.add_argument("--pytest", nargs=2, metavar=("PYTHON", "TESTS"),
                        help="run pytest on TESTS with this interpreter")
    parser.add_argument("--pytest-absent", metavar="REASON",
                        help="why the Python tests cannot run in this build")
    parser.add_argument("suites", nargs="+")
    args = parser.parse_args()

    cmd = [args.lit] if os.access(args.lit, os.X_OK) and not args.lit.endswith(".py") \
        else [sys.executable, args.lit]
    jobs = os.environ.get("CCLC_TEST_JOBS", str(os.cpu_count() or 2))
    cmd += ["-sv", "-j", jobs] + args.suites
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    counts = {}
    for line in proc.stdout:
        sys.stdout.write(line)
        match = re.match(r"^\s*(Passed|Failed|Unsupported|Expectedly Failed|Unexpectedly Passed|"
                         r"Unresolved|Timed Out|Skipped|Excluded)\s*:\s*(\d+)", line)
        if match:
            counts[match.group(1)] = int(match.group(2))
    status = proc.wait()
    passed = counts.get("Passed", 0) + counts.get("Expectedly Failed", 0)
    failed = sum(counts.get(k, 0) for k in ("Failed", "Unexpectedly Passed", "Unresolved",
                                              "Timed Out"))
    skipped = counts.get("Unsupported", 0) + counts.get("Skipped", 0)
    if status != 0 and failed == 0:
        failed = 1
    if args.pytest:
        py_passed, py_failed, py_skipped = run_pytest(*args.pytest)
        passed, failed, skipped = passed + py_passed, failed + py_failed, skipped + py_skipped
        status = status or py_failed
    elif args.pytest_absent:
        sys.stdout.write(f"Python tests skipped: {args.pytest_absent}\n")
        skipped += 1
    sys.stdout.write(f"check: {passed} passed, {failed} failed, {skipped} skipped\n")
    return 0 if status == 0 and failed == 0 else 1


def run_pytest(python, tests):
    """Runs pytest; its passed, failed and skipped counts (a run that collects
    nothing, or whose summary cannot be read, counts as one failure)."""
    cmd = [python, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", tests]
    sys.stdout.write(f"Running the Python tests: {' '.join(cmd)}\n")
    sys.stdout.flush()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    summary = ""
    for line in proc.stdout:
        sys.stdout.write(line)
        if re.search(r"\d+ (passed|failed|skipped|error)", line):
            summary = line
    status = proc.wait()
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)",
                                                     summary)}
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    if status != 0 and failed == 0:
        failed = 1
    return counts.get("passed", 0), failed, counts.get("skipped", 0)


if __name__ == "__main__":
    sys.exit(main())
