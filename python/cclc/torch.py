"""`import cclc.torch` registers the torch.distributed backend "cclc" for CPU tensors:

    import torch.distributed as dist
    import cclc.torch
    dist.init_process_group("cclc")          # or new_group(backend="cclc")

It joins through the store torch.distributed hands every backend (so torchrun,
mp.spawn and MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE work as with gloo) and
loads the plans of cclc.plans. The group's timeout becomes the runtime's
(CCLC_TIMEOUT_MS, unless set), and a job whose store listens on a loopback
address binds loopback too (CCLC_SOCKET_IFNAME, unless set). Waits yield
their core between polls (CCLC_WAIT_YIELD=1, unless set): a rank's own
threads compute beside its collectives (DDP's backward pass beside the
bucket all_reduces on the group's thread), so a core per rank is not a core
per waiting thread.

`cclc.torch.use_mapped_memory()` puts large CPU tensors in memory the ranks of a
host map, where the runtime moves their messages in one copy.
"""
import ipaddress
import os
import socket
from datetime import timedelta

import torch.distributed as dist

from . import _C, plans

#: What the user set before the first group; other settings are the group's.
_USER_SET = {name for name in ("CCLC_TIMEOUT_MS", "CCLC_SOCKET_IFNAME", "CCLC_WAIT_YIELD")
             if name in os.environ}


def _store_host(store):
    """The host of the TCP store under store's prefixes; None for other stores."""
    while isinstance(store, dist.PrefixStore):
        store = store.underlying_store
    if isinstance(store, dist.TCPStore):
        return store.host
    return os.environ.get("MASTER_ADDR")


def _is_loopback(host) -> bool:
    if not host:
        return False
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback
                   for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


def _create_backend(store, rank: int, size: int, timeout: timedelta):
    if "CCLC_TIMEOUT_MS" not in _USER_SET:
        os.environ["CCLC_TIMEOUT_MS"] = str(max(1, int(timeout.total_seconds() * 1000)))
    if "CCLC_SOCKET_IFNAME" not in _USER_SET and _is_loopback(_store_host(store)):
        os.environ["CCLC_SOCKET_IFNAME"] = "=lo"
    if "CCLC_WAIT_YIELD" not in _USER_SET:
        os.environ["CCLC_WAIT_YIELD"] = "1"
    return _C.create_backend(store, rank, size, timeout, plans.plan_files(size))


def use_mapped_memory(min_bytes=1 << 20, cache_bytes=1 << 30):
    """Serves CPU tensors of min_bytes and more, from now on, from memory that the
    other ranks of this host map (cclcMemAlloc), as ProcessGroupNCCL's mem_allocator
    serves CUDA memory the NCCL backend registers.

    A collective on such a tensor takes each large message from a peer as one
    memcpy into it, and reductions read the peer's tensor where it lies; other
    memory costs a system call per message or a copy through the shared FIFO.
    Call it before the tensors a job communicates are made: before the model and
    DistributedDataParallel, whose gradient buckets then live there.

    It replaces PyTorch's CPU allocator for the whole process, so every library's
    tensors of that size come from it. Freed buffers are kept for reuse, up to
    cache_bytes, by size (empty_mapped_cache() hands them back), which also spares
    a training step the page faults of its fresh gradients. The memory is shared:
    a process forked after a tensor was made shares that tensor with its parent,
    as after Tensor.share_memory_(). min_bytes=None stops serving new tensors.
    """
    _C.use_mapped_memory(0 if min_bytes is None else max(1, int(min_bytes)), int(cache_bytes))


def mapped_memory_stats():
    """{"live_bytes", "idle_bytes", "buffers"}: what use_mapped_memory's allocator
    holds in tensors, keeps for reuse, and in how many buffers."""
    return _C.mapped_memory_stats()


def empty_mapped_cache():
    """Hands the buffers use_mapped_memory's allocator keeps for reuse back to the system."""
    _C.empty_mapped_cache()


if "cclc" not in dist.Backend.backend_list:
    dist.Backend.register_backend("cclc", _create_backend, devices=["cpu", "cuda"])
