#!/usr/bin/env python3
"""Mutation fuzzing of cclc's input readers, with limits on every run.

Takes seed files of one kind (plan JSON, topology XML, graph XML or MSCCL-IR
XML), makes COUNT mutants of them with a pseudo-random generator seeded by
--seed (so every run tries the same inputs), and runs the cclc command that
reads that kind on each one, under an address-space limit (as `ulimit -v`
sets) and a time limit. Every run must end in success (status 0) or in a
clean refusal: status 1 with an "error:" diagnostic. A signal (a crash, an
abort on an uncaught exception or an internal error), a run past the time
limit, an "out of memory" diagnostic (the memory limit reached) or any other
status is a failure: the input is kept under WORK/failures with the command
that ran it, and the script exits with status 1.

Usage:
  hostile.py --cclc CCLC --kind plan|topo|graph|msccl --work DIR
             [--seed N] [--count N] [--memory-mib N] [--timeout S]
             [--algorithm FILE.ccl]... SEEDS...

SEEDS are files or directories (whose *.json or *.xml files are taken);
missing ones are skipped. For --kind graph each seed is GRAPH=TOPOLOGY: the
graph file is mutated and read against that topology.
"""
import argparse
import glob
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

# Values that sit on the edges readers check: bounds of the plan format and
# of the integer types, and a few that are not numbers at all.
INTERESTING_NUMBERS = [
    "0", "-1", "1", "2", "3", "7", "8", "63", "64", "65", "255", "256", "1023", "1024", "1025",
    "4095", "4096", "4097", "32767", "32768", "65535", "65536", "65537", "1048576", "2147483647",
    "2147483648", "-2147483648", "4294967295", "4294967296", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "18446744073709551615",
    "18446744073709551616", "99999999999999999999999999999999999999", "1e308", "-1e308",
    "1.5", "0x7fffffff", "0xffffffffffffffff", "NaN", "",
]
INTERESTING_STRINGS = [
    "", "A" * 4096, "\u00e9\u4e2d\U0001f600", "\\u0000", "/dev/zero", "/etc/passwd",
    "allreduce", "alltoall", "reduce_scatter", "ring", "tree", "none", "send", "recv",
    "recv_reduce_send", "copy", "input", "output", "scratch", "i", "o", "s", "rrcs", "nop",
    "0x030200", "0x060400", "0000:07:00.0", "x86_64", "GenuineIntel", "NVL", "SYS", "LOC",
    "%s%s%n", "../../../../etc/passwd", "{", "<", "]]>",
]


def find_seeds(specs, kind):
    """The seed files (or GRAPH=TOPOLOGY pairs) named by specs."""
    suffix = ".json" if kind == "plan" else ".xml"
    seeds = []
    for spec in specs:
        if kind == "graph":
            graph, _, topology = spec.partition("=")
            if os.path.isfile(graph) and os.path.isfile(topology):
                seeds.append((graph, topology))
            continue
        if os.path.isdir(spec):
            seeds.extend(sorted(glob.glob(os.path.join(spec, "*" + suffix))))
        elif os.path.isfile(spec):
            seeds.append(spec)
    # A file given twice (a copy beside the checkout) is one seed.
    unique, contents = [], set()
    for seed in seeds:
        text = open(seed[0] if kind == "graph" else seed, "rb").read()
        if text not in contents:
            contents.add(text)
            unique.append(seed)
    return unique


# --- Mutations -------------------------------------------------------------
# Each takes the text (bytes) and the generator and returns the mutant.

def flip_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.choice(
                [rng.randrange(256), ord(rng.choice("{}[]<>\"'/:,=\\0-9 \n"))])
    return bytes(data)


def delete_span(data, rng):
    if not data:
        return data
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.choice([1, 2, 8, 64, 512, 4096]))
    return data[:start] + data[end:]


def duplicate_span(data, rng):
    if not data:
        return data
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.choice([1, 8, 64, 512, 4096]))
    at = rng.randrange(len(data) + 1)
    return data[:at] + data[start:end] * rng.choice([1, 2, 16]) + data[at:]


def truncate(data, rng):
    return data[:rng.randrange(len(data) + 1)]


def number(data, rng):
    """Replaces one of the integers in the text with an interesting value."""
    matches = list(re.finditer(rb"-?[0-9]+", data))
    if not matches:
        return flip_bytes(data, rng)
    m = rng.choice(matches)
    value = rng.choice(INTERESTING_NUMBERS).encode()
    if rng.random() < 0.2:
        value = str(int(m.group()) + rng.choice([-2, -1, 1, 2])).encode()
    return data[:m.start()] + value + data[m.end():]


def string(data, rng):
    """Replaces the contents of one quoted string with an interesting one."""
    matches = list(re.finditer(rb'"([^"\\\n]{0,200})"', data))
    if not matches:
        return flip_bytes(data, rng)
    m = rng.choice(matches)
    value = rng.choice(INTERESTING_STRINGS).encode("utf-8")
    if rng.random() < 0.3:
        # Another string of the same file: a field name where a value goes.
        value = rng.choice(matches).group(1)
    return data[:m.start(1)] + value + data[m.end(1):]


def splice(data, rng, others):
    """The start of this seed followed by the end of another."""
    other = rng.choice(others)
    return data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]


MAX_SIZE = 4 << 20


WRAP = "\u0000wrap\u0000"


def json_structure(data, rng):
    """A mutation of the JSON document's structure: a value removed,
    duplicated, replaced by one of another type, or wrapped deep."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return flip_bytes(data, rng)
    containers = []

    def walk(node, depth):
        if isinstance(node, (dict, list)) and node:
            containers.append(node)
            for child in (node.values() if isinstance(node, dict) else node):
                walk(child, depth + 1)
    walk(doc, 0)
    if not containers:
        return flip_bytes(data, rng)
    node = rng.choice(containers)
    key = rng.choice(list(node.keys())) if isinstance(node, dict) else rng.randrange(len(node))
    choice = rng.randrange(7)
    if choice == 0:
        del node[key]
    elif choice == 1 and isinstance(node, list):
        for _ in range(rng.choice([1, 2, 100])):
            node.insert(key, json.loads(json.dumps(node[key])))
    elif choice == 2:
        node[key] = rng.choice([None, True, False, 0, -1, 1.5, "", [], {}, [0], {"x": 1},
                                2 ** 31, 2 ** 63, -2 ** 63, 2 ** 64])
    elif choice == 3:
        # Wrapped in arrays, around the reader's nesting bound and far past
        # it: spliced into the text, which Python's encoder could not nest.
        depth = rng.choice([1, 10, 56, 57, 60, 70, 100000])
        inner = json.dumps(node[key])
        node[key] = WRAP
        text = json.dumps(doc, indent=rng.choice([None, 1]))
        return text.replace(json.dumps(WRAP), "[" * depth + inner + "]" * depth, 1).encode()
    elif choice == 4 and isinstance(node, dict):
        node[rng.choice(["speed", "ops", "", "source", "source_text", "line", "x" * 1000])] = \
            rng.choice([1, "a", [], None])
    elif choice == 5 and isinstance(node, list) and len(node) > 1:
        rng.shuffle(node)
    else:
        other = rng.choice(containers)
        okey = rng.choice(list(other.keys())) if isinstance(other, dict) else \
            rng.randrange(len(other))
        node[key] = json.loads(json.dumps(other[okey]))
    try:
        return json.dumps(doc, indent=rng.choice([None, 1])).encode()
    except RecursionError:
        return flip_bytes(data, rng)


ELEMENT = re.compile(rb"<([A-Za-z_][A-Za-z0-9_]*)\b[^<>]*?(/>|>)")


def xml_structure(data, rng):
    """A mutation of the XML's elements: one removed, repeated, nested in
    copies of itself (around and far beyond the readers' depth bound), or an
    attribute dropped or repeated."""
    tags = list(ELEMENT.finditer(data))
    if not tags:
        return flip_bytes(data, rng)
    m = rng.choice(tags)
    name = m.group(1)
    start = m.start()
    if m.group(2) == b"/>":
        end = m.end()
    else:
        close = data.find(b"</" + name + b">", m.end())
        if close < 0:
            return flip_bytes(data, rng)
        end = close + len(name) + 3
    element = data[start:end]
    choice = rng.randrange(5)
    if choice == 0:
        return data[:start] + data[end:]
    if choice == 1:
        return data[:end] + element * rng.choice([1, 2, 50, 500]) + data[end:]
    if choice == 2 and m.group(2) == b">":
        depth = rng.choice([2, 63, 64, 65, 200, 10000])
        opening = data[start:m.end()]
        return data[:start] + opening * depth + element + \
            (b"</" + name + b">") * depth + data[end:]
    attributes = list(re.finditer(rb'\s([A-Za-z_]+)="[^"]*"', data[start:m.end()]))
    if not attributes:
        return flip_bytes(data, rng)
    a = rng.choice(attributes)
    if choice == 3:
        return data[:start + a.start()] + data[start + a.end():]
    value = rng.choice(INTERESTING_NUMBERS + INTERESTING_STRINGS[:6]).encode("utf-8")
    return data[:start + a.end()] + b" " + a.group(1) + b'="' + value.replace(b'"', b"") + \
        b'"' + data[start + a.end():]


def mutate(data, rng, others, kind):
    """One to three mutations of seed data."""
    generic = [flip_bytes, delete_span, duplicate_span, truncate, number, number, string]
    structural = json_structure if kind == "plan" else xml_structure
    for _ in range(rng.choice([1, 1, 2, 3])):
        pick = rng.random()
        if pick < 0.45:
            data = structural(data, rng)
        elif pick < 0.95:
            data = rng.choice(generic)(data, rng)
        else:
            data = splice(data, rng, others)
        data = data[:MAX_SIZE]
    return data


# --- Running ---------------------------------------------------------------

def command(args, kind, path, pair, index):
    """The cclc command that reads input path (of kind), as a list."""
    cclc = args.cclc
    if kind == "plan":
        return [cclc, "plan-check", path, "-o", os.devnull]
    if kind == "msccl":
        return [cclc, "import-msccl", path, "--emit=json", "-o", os.devnull]
    if kind == "graph":
        return [cclc, "topo", pair, "--graph", path, "--emit=text"]
    # Topologies: read and searched, and every third one compiled for.
    if args.algorithm and index % 3 == 0:
        algorithm = args.algorithm[index // 3 % len(args.algorithm)]
        return [cclc, "compile", algorithm, "--topo", path, "--emit=json", "-o", os.devnull]
    return [cclc, "topo", path, "--emit=text"]


def limit(memory_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setsid()
    return apply


def run(cmd, memory_bytes, timeout):
    """(verdict, status, stderr tail): verdict is None when the run ended in
    success or a clean diagnostic, else why it did not."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=limit(memory_bytes))
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return "hang: still running after %g s" % timeout, None, err
    status = proc.returncode
    text = err.decode("utf-8", "replace")
    if status < 0:
        return "crash: killed by signal %d (%s)" % (-status, signal.Signals(-status).name), \
            status, err
    if "out of memory" in text:
        return "limit: ran out of its %d MiB" % (memory_bytes >> 20), status, err
    if status == 0:
        return None, status, err
    if status != 1:
        return "exit status %d (expected 0, or 1 with a diagnostic)" % status, status, err
    if "error:" not in text:
        return "status 1 without an error diagnostic", status, err
    return None, status, err


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cclc", required=True)
    parser.add_argument("--kind", required=True, choices=["plan", "topo", "graph", "msccl"])
    parser.add_argument("--work", required=True, help="folder for mutants and failures")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--memory-mib", type=int, default=1024)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--algorithm", action="append",
                        help="(topo) a .ccl file every third mutant is compiled for, in turn "
                             "with the others given")
    parser.add_argument("seeds", nargs="+")
    args = parser.parse_args()
    args.cclc = shutil.which(args.cclc) or args.cclc

    seeds = find_seeds(args.seeds, args.kind)
    if not seeds:
        sys.exit("hostile.py: no %s seeds in %s" % (args.kind, " ".join(args.seeds)))
    texts = [open(s[0] if args.kind == "graph" else s, "rb").read() for s in seeds]
    kind_number = ["plan", "topo", "graph", "msccl"].index(args.kind)
    rng = random.Random(args.seed * 1000 + kind_number)
    os.makedirs(args.work, exist_ok=True)
    failures_dir = os.path.join(args.work, "failures")
    memory = args.memory_mib << 20
    suffix = ".json" if args.kind == "plan" else ".xml"

    # The seeds themselves first: each must read cleanly, or the mutants
    # start from broken ground.
    cases = [(texts[i], i, "seed") for i in range(len(seeds))]
    for n in range(args.count):
        i = rng.randrange(len(seeds))
        cases.append((mutate(texts[i], rng, texts, args.kind), i, "mutant %d" % n))

    counts = {"accepted": 0, "refused": 0}
    failures = []
    slowest = (0.0, "")
    started = time.monotonic()
    for index, (data, i, what) in enumerate(cases):
        path = os.path.join(args.work, "input%s" % suffix)
        with open(path, "wb") as out:
            out.write(data)
        pair = seeds[i][1] if args.kind == "graph" else None
        cmd = command(args, args.kind, path, pair, index)
        t0 = time.monotonic()
        verdict, status, err = run(cmd, memory, args.timeout)
        took = time.monotonic() - t0
        if took > slowest[0]:
            slowest = (took, what)
        if verdict is None:
            counts["accepted" if status == 0 else "refused"] += 1
            continue
        os.makedirs(failures_dir, exist_ok=True)
        kept = os.path.join(failures_dir, "%s-%d%s" % (args.kind, index, suffix))
        with open(kept, "wb") as out:
            out.write(data)
        shown = [kept if c == path else c for c in cmd]
        failures.append((what, verdict, shown, err.decode("utf-8", "replace")[-600:]))

    total = time.monotonic() - started
    seed_name = lambda s: os.path.basename(s[0] if args.kind == "graph" else s)
    print("%s: %d seeds (%s), %d mutants, seed %d, limits %d MiB and %g s per input" %
          (args.kind, len(seeds), ", ".join(seed_name(s) for s in seeds), args.count,
           args.seed, args.memory_mib, args.timeout))
    print("%s: %d accepted, %d refused with a diagnostic, %d failed; %.1f s in all, slowest "
          "%.2f s (%s)" % (args.kind, counts["accepted"], counts["refused"], len(failures),
                           total, slowest[0], slowest[1]))
    for what, verdict, cmd, err in failures:
        print("FAIL (%s): %s\n  command: %s\n  stderr: %s" %
              (what, verdict, " ".join(cmd), err.strip().replace("\n", "\n          ")))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
