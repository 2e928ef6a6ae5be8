"""Asynchronous calls of a cclc process group: a call returns before its
peers have joined it, its Work and future complete when it has run, and
calls run in the order they were issued however they are waited for.

The case is argv[2]:
  overlap   rank 0 starts an all_reduce (async_op=True) that the others only
            join once rank 0 has seen it pending (they wait for a file rank 0
            writes), then waits on a future chained to it;
  order     every rank issues all_reduces of several sizes, a broadcast and a
            ring of isend/irecv without waiting, then waits in reverse order;
  killed    the last rank dies; the others' pending all_reduce fails when
            waited for, through its Work and its future.
Each rank writes what it saw to OUT/rank<R>.json.
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


def wait_for(path: Path, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.01)


def overlap(out, rank, numel):
    go = out / "go"
    t = torch.full((numel,), float(rank + 1))
    if rank == 0:
        work = dist.all_reduce(t, async_op=True)
        pending = not work.is_completed()
        chained = work.get_future().then(lambda f: f.value()[0] * 2)
        go.write_text("")
        doubled = chained.wait()
        work.wait()
        return {"pending": pending, "completed": work.is_completed(),
                "result": t[:2].tolist(), "doubled": doubled[:2].tolist()}
    wait_for(go)
    dist.all_reduce(t)
    return {"result": t[:2].tolist()}


def order(rank, world):
    sizes = [1, 1000, 1 << 16, 1 << 20, 3]
    tensors = [torch.full((n,), float(rank + i)) for i, n in enumerate(sizes)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    root = torch.arange(1 << 18, dtype=torch.float64) * (rank == 1)
    works.append(dist.broadcast(root, src=1, async_op=True))
    send = torch.full((1 << 17,), float(rank))
    recv = torch.empty(1 << 17)
    works.append(dist.isend(send, (rank + 1) % world))
    works.append(dist.irecv(recv, (rank - 1) % world))
    # The same tensor again, after its first call: it must see that result.
    works.append(dist.all_reduce(tensors[3], async_op=True))
    for w in reversed(works):
        w.wait()
    return {"sums": [t[0].item() for t in tensors], "lengths": [t.numel() for t in tensors],
            "broadcast_ok": bool(torch.equal(root, torch.arange(1 << 18, dtype=torch.float64))),
            "received": recv[0].item()}


def killed(rank, world):
    dist.barrier()
    if rank == world - 1:
        os._exit(3)
    t = torch.ones(1 << 20)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    start = time.monotonic()
    seen = {}
    try:
        work.wait()
        seen["work"] = None
    except Exception as e:  # noqa: BLE001
        seen["work"] = type(e).__name__
        seen["message"] = str(e)
    try:
        fut.wait()
        seen["future"] = None
    except Exception as e:  # noqa: BLE001
        seen["future"] = type(e).__name__
    seen["seconds"] = time.monotonic() - start
    return seen


def main():
    out, case = Path(sys.argv[1]), sys.argv[2]
    dist.init_process_group("cclc", timeout=TIMEOUT)
    rank, world = dist.get_rank(), dist.get_world_size()
    if case == "overlap":
        result = overlap(out, rank, int(sys.argv[3]))
    elif case == "order":
        result = order(rank, world)
    else:
        result = killed(rank, world)
    (out / f"rank{rank}.json").write_text(json.dumps(result))
    if case == "killed":
        os._exit(0)  # Leave without waiting for the dead peer.
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
