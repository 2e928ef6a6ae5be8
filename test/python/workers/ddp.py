"""DistributedDataParallel training on the cclc backend and on gloo, side by side.

The same model (same seed), the same per-rank batches and the same optimizer
train twice, once over each backend; every rank records both loss curves.
With the argument "mapped", both train with their tensors of 4 KiB and more in
memory the ranks map (cclc.torch.use_mapped_memory); with "buckets", DDP asks
each group's backend for its buckets' memory (DDP_DISABLE_COMM_MEM=0), which
cclc's serves from memory the ranks map and gloo's leaves to PyTorch.
"""
import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import cclc.torch

STEPS = 25


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                               torch.nn.ReLU(), torch.nn.Linear(64, 4))


def train(group, rank, device=torch.device("cpu")):
    # A small bucket size makes DDP reduce the gradients in several buckets.
    ddp = DistributedDataParallel(model().to(device), process_group=group, bucket_cap_mb=0.01,
                                  device_ids=[device] if device.type == "cuda" else None)
    # What the backend's allocator holds now: the buckets, where it made them.
    bucket_bytes = cclc.torch.mapped_memory_stats()["live_bytes"]
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for step in range(STEPS):
        g = torch.Generator().manual_seed(1000 * rank + step)
        x = torch.randn(16, 32, generator=g)
        y = torch.randint(0, 4, (16,), generator=g)
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    params = torch.cat([p.detach().flatten() for p in ddp.parameters()])
    return losses, params, bucket_bytes


def main():
    out = Path(sys.argv[1])
    mapped = sys.argv[2:] == ["mapped"]
    if sys.argv[2:] == ["buckets"]:
        os.environ["DDP_DISABLE_COMM_MEM"] = "0"
    torch.set_num_threads(1)
    if mapped:
        # DDP's buckets (10 KB here) and the gradients in memory the ranks map.
        cclc.torch.use_mapped_memory(min_bytes=4096)
    dist.init_process_group("cclc")
    rank = dist.get_rank()
    gloo = dist.new_group(backend="gloo")
    cclc_losses, cclc_params, cclc_buckets = train(dist.group.WORLD, rank)
    gloo_losses, gloo_params, gloo_buckets = train(gloo, rank)
    # Every replica must hold the same parameters after training.
    gathered = [torch.empty_like(cclc_params) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, cclc_params)
    replicas_agree = all(torch.equal(gathered[0], p) for p in gathered)
    result = {"cclc": cclc_losses, "gloo": gloo_losses, "replicas_agree": replicas_agree,
              "max_param_diff": (cclc_params - gloo_params).abs().max().item(),
              "mapped_buffers": cclc.torch.mapped_memory_stats()["buffers"],
              "cclc_bucket_bytes": cclc_buckets, "gloo_bucket_bytes": gloo_buckets}
    dist.destroy_process_group()
    (out / f"rank{rank}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
