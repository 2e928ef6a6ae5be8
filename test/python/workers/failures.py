"""Failures a cclc process group must turn into Python exceptions.

The case is argv[2]:
  mismatch   rank 0 all-reduces more elements than the others;
  killed     the last rank dies before an all_reduce the others enter;
  misuse     unsupported inputs (a dtype, an operator, a non-contiguous tensor).
Every rank records the exception it saw (type and message) and how long the
failing call took; a rank that was meant to die records nothing.
"""
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

import cclc.torch  # noqa: F401

TIMEOUT = timedelta(seconds=5)


def attempt(fn):
    start = time.monotonic()
    try:
        fn()
        return {"raised": None, "seconds": time.monotonic() - start}
    except Exception as e:  # noqa: BLE001
        return {"raised": type(e).__name__, "message": str(e),
                "seconds": time.monotonic() - start}


def main():
    out, case = Path(sys.argv[1]), sys.argv[2]
    dist.init_process_group("cclc", timeout=TIMEOUT)
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {}
    if case == "mismatch":
        t = torch.ones(4096 if rank == 0 else 1024)
        result = attempt(lambda: dist.all_reduce(t))
    elif case == "killed":
        dist.barrier()
        if rank == world - 1:
            os._exit(3)
        t = torch.ones(1 << 16)
        result = attempt(lambda: dist.all_reduce(t))
    elif case == "misuse":
        result = {
            "dtype": attempt(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16))),
            "operator": attempt(lambda: dist.all_reduce(torch.ones(4), op=dist.ReduceOp.BAND)),
            "strided": attempt(lambda: dist.all_reduce(torch.ones(4, 4).t())),
        }
        # The group still works after refusals: nothing was sent.
        t = torch.ones(3)
        dist.all_reduce(t)
        result["after"] = t.tolist()
        dist.destroy_process_group()
    (out / f"rank{rank}.json").write_text(json.dumps(result))
    # Leave without waiting for peers that are gone.
    os._exit(0)


if __name__ == "__main__":
    main()
