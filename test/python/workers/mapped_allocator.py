"""cclc.torch.use_mapped_memory's allocator in one process, without a group.

Records where tensors of each size live (in a cclc buffer or not), what the
allocator holds after each step, and whether a freed buffer is reused.
"""
import json
import sys
from pathlib import Path

import torch

import cclc.torch


def in_cclc_buffer(t) -> bool:
    """Whether t's memory lies in a mapping of a cclc buffer (cclcMemAlloc)."""
    p = t.data_ptr()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if lo <= p < hi:
                return len(fields) > 5 and fields[5].startswith("/memfd:cclc-buffer-")
    return False


def main():
    out = Path(sys.argv[1])
    r = {}
    before = torch.empty(1 << 20)
    cclc.torch.use_mapped_memory(min_bytes=1 << 16, cache_bytes=8 << 20)
    r["before_mapped"] = in_cclc_buffer(before)
    big, small = torch.ones(1 << 20), torch.ones(100)
    r["big_mapped"], r["small_mapped"] = in_cclc_buffer(big), in_cclc_buffer(small)
    # min and max make no tensor the size of big, which would come from the allocator too.
    r["big_values"] = big.min().item() == 1 == big.max().item()
    r["live"] = cclc.torch.mapped_memory_stats()
    address = big.data_ptr()
    del big, small, before
    r["after_free"] = cclc.torch.mapped_memory_stats()
    again = torch.empty(1 << 20)
    r["reused"] = again.data_ptr() == address
    # Larger than the cache holds: freed, not kept.
    huge = torch.empty(3 << 20)
    del huge
    r["after_huge"] = cclc.torch.mapped_memory_stats()
    # Autograd's gradients come from the allocator too.
    w = torch.randn(512, 512, requires_grad=True)
    (w * 3).sum().backward()
    r["grad_mapped"] = in_cclc_buffer(w.grad)
    r["grad_values"] = w.grad.min().item() == 3 == w.grad.max().item()
    del w, again
    cclc.torch.empty_mapped_cache()
    r["emptied"] = cclc.torch.mapped_memory_stats()
    cclc.torch.use_mapped_memory(None)
    r["off_mapped"] = in_cclc_buffer(torch.empty(1 << 20))
    (out / "rank0.json").write_text(json.dumps(r))


if __name__ == "__main__":
    main()
