"""The plans a cclc process group loads.

With CCLC_PLAN_DIR set, the group loads every `*.json` plan in it (written by
`cclc compile --emit=json` or `cclc tune`), in name order, on every rank alike.
Otherwise it loads the library's algorithms compiled for the group's size by
the compiler shipped in this package: every algorithm that fits the size, with
the size window where the cost model predicts it is the fastest (`--explain`),
and collectives with a root compiled for every root. They are compiled once per
size and kept under `$CCLC_CACHE_DIR` (default `~/.cache/cclc`).

The windows depend on the tensors' memory, so every algorithm is compiled twice,
once for each kind of buffer (`--buffers`), and the runtime serves each call with
the plans chosen for its kind. In memory the ranks map
(`cclc.torch.use_mapped_memory`) a message moves in one memcpy and a reduction
reads the peer's tensor where it lies, as the cost model's CPU costs (`--cpu`)
price it. On the heap a large message takes a system call or two copies through
the shared FIFO, which no cost model prices: there the GPU link model's windows
are kept, as they match what was measured (at 2 ranks, in place, the butterfly
beat halving-doubling from 1 MiB on the heap and lost to it in mapped memory).
"""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List

from . import ALGORITHMS, COMPILER, __version__

#: Collectives with a root, compiled once per root.
ROOTED = {"broadcast", "reduce"}
#: Above this size, rooted collectives are compiled for root 0 only; the
#: runtime serves other roots with its built-in ring.
MAX_ROOTED_RANKS = 64
#: How every library plan is compiled: with the size window where the cost
#: model predicts it is the fastest (`--explain`).
COMPILE_OPTIONS = ("--emit=json", "--explain")
#: And for each kind of buffer: for heap tensors by the simple protocol, since
#: most of a group's calls run on the host, whose executors send every message
#: the simple way (LL's lower latency is a GPU's; predicted for a host, it
#: would favour algorithms of small messages that the host does not run
#: faster), and CUDA tensors run the same plans on the GPU; for mapped memory
#: priced as a CPU's (`--cpu`), whose reductions cost what its copies do, so
#: that halving-doubling, which reduces half the buffer where the butterfly
#: reduces all of it, serves from a few KiB.
BUFFER_OPTIONS = {"unmapped": ("--protocol", "simple"), "mapped": ("--cpu",)}


def plan_files(world_size: int) -> List[str]:
    """The plan files for a group of world_size ranks, in load order."""
    directory = os.environ.get("CCLC_PLAN_DIR")
    if directory:
        files = sorted(Path(directory).glob("*.json"))
        if not files:
            raise RuntimeError(f"cclc: CCLC_PLAN_DIR={directory} holds no *.json plan; write "
                               "plans there with `cclc compile --emit=json` or unset it")
        return [str(f) for f in files]
    return library_plans(world_size)


def cache_root() -> Path:
    base = os.environ.get("CCLC_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cclc"


def library_key() -> str:
    """What the cached plans depend on besides the rank count: the package's
    version, its compiler (size and time of last change: a rebuilt or
    reinstalled compiler may compile differently under the same version), the
    options it compiles with, and the text of every algorithm of the library."""
    digest = hashlib.sha256()
    compiler = COMPILER.stat()
    digest.update(f"{compiler.st_size}:{compiler.st_mtime_ns}".encode())
    digest.update("\0".join(COMPILE_OPTIONS).encode())
    for kind, options in sorted(BUFFER_OPTIONS.items()):
        digest.update("\0".join((kind, *options)).encode())
    for source in sorted(ALGORITHMS.glob("*.ccl")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return f"plans-{__version__}-{digest.hexdigest()[:16]}"


def library_plans(world_size: int) -> List[str]:
    """The library's algorithms compiled for world_size ranks, from the cache
    or compiled into it now. Ranks that compile at once each write a private
    directory and the first to finish publishes it; the plans are the same."""
    final = cache_root() / library_key() / f"n{world_size}"
    if not (final / "COMPLETE").exists():
        final.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".n{world_size}-", dir=final.parent))
        try:
            compile_library(world_size, scratch)
            (scratch / "COMPLETE").write_text("")
            os.rename(scratch, final)
        except OSError:
            if not (final / "COMPLETE").exists():
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return sorted(str(f) for f in final.glob("*.json"))


def compile_library(world_size: int, out: Path) -> None:
    """Compiles every algorithm of the library that fits world_size into out,
    as SOURCE.KIND.json (SOURCE.KIND.rootR.json for each root of a rooted
    collective) for each kind of buffer; SKIPPED lists those that do not fit,
    with the compiler's reason."""
    skipped = []
    for source in sorted(ALGORITHMS.glob("*.ccl")):
        for kind, options in BUFFER_OPTIONS.items():
            first = out / f"{source.stem}.{kind}.json"
            reason = compile_plan(source, world_size, 0, first, kind, options)
            if reason:
                skipped.append(f"{source.name}: {reason}")
                break
            if json.loads(first.read_text())["collective"] not in ROOTED:
                continue
            first.rename(out / f"{source.stem}.{kind}.root0.json")
            for root in range(1, min(world_size, MAX_ROOTED_RANKS)):
                reason = compile_plan(source, world_size, root,
                                      out / f"{source.stem}.{kind}.root{root}.json", kind, options)
                if reason:
                    raise RuntimeError(f"cclc: compiling {source} for root {root}: {reason}")
    (out / "SKIPPED").write_text("".join(line + "\n" for line in skipped))


def compile_plan(source: Path, world_size: int, root: int, output: Path, kind: str,
                 options) -> str:
    """Compiles one plan for buffers of kind with options; the compiler's
    diagnostics when it cannot."""
    command = [str(COMPILER), "compile", str(source), "--nranks", str(world_size),
               "--root", str(root), *COMPILE_OPTIONS, *options, "--buffers", kind, "--algorithms", str(ALGORITHMS),
               "-o", str(output)]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=300)
    return done.stderr.strip() if done.returncode else ""
