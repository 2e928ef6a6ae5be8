"""A job as users start one: under torchrun, or forked by mp.spawn (argv[2] ==
"spawn"). Each rank all-reduces its rank and writes the sum, and whether its
waits yield their core (CCLC_WAIT_YIELD, which the backend sets unless the
user did)."""
import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import cclc.torch  # noqa: F401


def work(rank, out, world):
    if world:  # mp.spawn: the rendezvous comes from the arguments.
        dist.init_process_group("cclc", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}",
                                rank=rank, world_size=world)
    else:
        dist.init_process_group("cclc")
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)
    (Path(out) / f"rank{dist.get_rank()}.json").write_text(
        json.dumps({"sum": t.item(), "backend": dist.get_backend(),
                    "wait_yield": os.environ.get("CCLC_WAIT_YIELD")}))
    dist.destroy_process_group()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "spawn":
        mp.spawn(work, args=(sys.argv[1], int(sys.argv[3])), nprocs=int(sys.argv[3]))
    else:
        work(None, sys.argv[1], 0)
