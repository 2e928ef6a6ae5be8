"""Collectives of the cclc backend on tensors in memory the ranks map.

Every rank serves its tensors of 64 KiB and more from cclc.torch's mapped
allocator, so the collectives' large messages go in one copy between mapped
buffers (CCLC_SINGLE_COPY, whose default is 64 KiB), and records per case
"ok" or what differed from the result computed from every rank's inputs, and
how many of its peers' buffers it mapped.
"""
import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import cclc.torch
from collectives import Checker, make_input, reference

DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16,
          "i32": torch.int32, "i64": torch.int64}
SIZES = (70001, 300007)


def peer_mappings() -> int:
    """Mappings of cclc buffers that are not this process's own: its peers'."""
    own = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:cclc-buffer-"):
                own.add(os.stat(f"/proc/self/fd/{fd}").st_ino)
        except OSError:
            pass
    with open("/proc/self/maps") as maps:
        return sum(1 for line in maps
                   if "/memfd:cclc-buffer-" in line and int(line.split()[4]) not in own)


def main():
    out = Path(sys.argv[1])
    torch.set_num_threads(1)
    cclc.torch.use_mapped_memory(min_bytes=1 << 16)
    dist.init_process_group("cclc")
    rank, world = dist.get_rank(), dist.get_world_size()
    check = Checker()
    for dname, dtype in DTYPES.items():
        for n in SIZES:
            inputs = [make_input(r, n, dtype) for r in range(world)]
            for op in ("sum", "max"):
                t = inputs[rank].clone()
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op.upper()))
                check.case(f"all_reduce-{op}-{dname}-n{n}", t, reference(op, inputs))
            gathered = torch.empty(world * n, dtype=dtype)
            dist.all_gather_into_tensor(gathered, inputs[rank])
            check.case(f"all_gather-{dname}-n{n}", gathered, torch.cat(inputs))
            scattered = torch.empty(n, dtype=dtype)
            # Rank r's part of every input is that input times r + 1.
            dist.reduce_scatter_tensor(scattered,
                                       torch.cat([inputs[rank] * (r + 1) for r in range(world)]))
            check.case(f"reduce_scatter-{dname}-n{n}", scattered,
                       reference("sum", inputs) * (rank + 1))
            root = world - 1
            t = inputs[rank].clone()
            dist.broadcast(t, src=root)
            check.case(f"broadcast-{dname}-n{n}", t, inputs[root])
            t = inputs[rank].clone()
            dist.reduce(t, dst=0)
            if rank == 0:
                check.case(f"reduce-{dname}-n{n}", t, reference("sum", inputs))
    result = {"cases": check.results, "peer_mappings": peer_mappings(),
              "stats": cclc.torch.mapped_memory_stats()}
    dist.destroy_process_group()
    (out / f"rank{rank}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
