"""Runs jobs of the cclc torch.distributed backend for the tests.

A job is one worker script run as world_size processes on this host, with the
environment torchrun gives (MASTER_ADDR on loopback, MASTER_PORT, RANK,
WORLD_SIZE), so every job initialises through init_process_group's env://
rendezvous. Each rank writes what it found as JSON to OUT/rank<R>.json; the
tests read those. A job is bounded in time and its processes are killed when
it overruns. Every process binds loopback only (LOOPBACK).
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

WORKERS = Path(__file__).resolve().parent / "workers"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Every process of a test talks over loopback only: cclc, and the gloo
#: groups the tests compare with (gloo otherwise binds the host's address).
LOOPBACK = {"CCLC_SOCKET_IFNAME": "=lo", "GLOO_SOCKET_IFNAME": "lo"}


def job_environment(rank: int, world_size: int, port: int, cache: Path) -> dict:
    env = dict(os.environ, **LOOPBACK)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
               LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size), CCLC_CACHE_DIR=str(cache),
               OMP_NUM_THREADS="1")
    return env


class Job:
    """The outcome of one job: each rank's exit code, output and results."""

    def __init__(self, codes, logs, results):
        self.codes = codes
        self.logs = logs
        self.results = results

    def describe(self) -> str:
        return "\n".join(f"--- rank {r} exited {c}:\n{log}"
                         for r, (c, log) in enumerate(zip(self.codes, self.logs)))


def run_job(script: str, world_size: int, out: Path, *args, timeout: float = 240,
            env: dict = None) -> Job:
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    procs = []
    for rank in range(world_size):
        rank_env = job_environment(rank, world_size, port, out.parent / "cache")
        rank_env.update(env or {})
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKERS / script), str(out), *map(str, args)], env=rank_env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    codes, logs = [], []
    for proc in procs:
        try:
            log, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            log, _ = proc.communicate()
            log += f"\n[killed after {timeout} s]"
        codes.append(proc.returncode)
        logs.append(log)
    results = []
    for rank in range(world_size):
        path = out / f"rank{rank}.json"
        results.append(json.loads(path.read_text()) if path.exists() else None)
    return Job(codes, logs, results)

