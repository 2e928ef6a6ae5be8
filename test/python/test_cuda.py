"""The cclc backend on CUDA tensors, at 2 and 3 ranks on the GPUs there are
(several ranks share a GPU where there are fewer): every collective the
runtime runs on the GPU × dtype, the operations staged through host memory,
streams and futures, and DDP of a CUDA model.
Skipped where PyTorch sees no CUDA device.
"""
import pytest
import torch

from conftest import run_job

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="PyTorch sees no CUDA device")

WORLD_SIZES = (2, 3)
DTYPES = ("f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64")
SIZES = (1, 1031)
OPERATIONS = ([f"all_reduce-{op}" for op in ("sum", "avg", "product", "min", "max")] +
              ["broadcast", "reduce-sum", "reduce-max", "all_gather", "all_gather_into_tensor",
               "reduce_scatter", "reduce_scatter_tensor"])
STAGED = ("all_to_all", "all_to_all_single", "all_to_all_single-splits", "gather", "scatter",
          "send_recv", "isend_irecv")
CASES = [f"{op}-{d}-n{n}" for op in OPERATIONS for d in DTYPES for n in SIZES] + \
        [f"{op}-{d}-n{n}" for op in STAGED for d in ("f32", "i64") for n in SIZES] + \
        ["async-wait-large", "future-large", "host-and-gpu"]

_jobs = {}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    def get(world):
        if world not in _jobs:
            _jobs[world] = run_job("cuda_collectives.py", world,
                                   tmp_path_factory.mktemp(f"cuda{world}"), timeout=400)
        return _jobs[world]
    return get


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("case", CASES)
def test_case(job, world, case):
    result = job(world)
    assert result.codes == [0] * world, result.describe()
    for rank, ranked in enumerate(result.results):
        assert ranked["cases"].get(case) == "ok", f"rank {rank}: {ranked['cases'].get(case)}"


@pytest.mark.parametrize("world", WORLD_SIZES)
def test_ddp_losses_match_gloo(job, world):
    result = job(world)
    assert result.codes == [0] * world, result.describe()
    for rank, ranked in enumerate(result.results):
        losses = ranked["losses"]
        assert len(losses["cclc"]) >= 20
        assert losses["cclc"] == pytest.approx(losses["gloo"], rel=1e-4, abs=1e-5), f"rank {rank}"
