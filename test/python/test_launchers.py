"""The backend starts under torchrun and under mp.spawn, as gloo does; its
waits yield their core unless the user said otherwise."""
import json
import os
import subprocess
import sys

from conftest import LOOPBACK, WORKERS, free_port


def results(out, world):
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]


def test_torchrun(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "3",
         "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
         str(WORKERS / "launched.py"), str(tmp_path)],
        capture_output=True, text=True, timeout=180,
        env=dict(os.environ, **LOOPBACK, CCLC_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1",
                 CCLC_WAIT_YIELD="0"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert results(tmp_path, 3) == [{"sum": 3.0, "backend": "cclc", "wait_yield": "0"}] * 3


def test_mp_spawn(tmp_path):
    done = subprocess.run(
        [sys.executable, str(WORKERS / "launched.py"), str(tmp_path), "spawn", "2"],
        capture_output=True, text=True, timeout=180,
        env=dict(os.environ, **LOOPBACK, PORT=str(free_port()), CCLC_CACHE_DIR=str(tmp_path / "cache"),
                 OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert results(tmp_path, 2) == [{"sum": 1.0, "backend": "cclc", "wait_yield": "1"}] * 2
