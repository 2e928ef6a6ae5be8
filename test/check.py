#!/usr/bin/env python3
"""Runs lit over the given suites and ends with one summary line.

lit prints its own per-category counts; CI and people both want a single
closing line of the form "check: N passed, N failed, N skipped".
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lit", required=True, help="path to lit or lit.py")
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
    sys.stdout.write(f"check: {passed} passed, {failed} failed, {skipped} skipped\n")
    return 0 if status == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
