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


if "cclc" not in dist.Backend.backend_list:
    dist.Backend.register_backend("cclc", _create_backend, devices=["cpu"])
