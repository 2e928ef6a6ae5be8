"""Every operation × dtype of the cclc backend at 2, 3 and 4 ranks, against gloo.

One job per world size runs every case (workers/collectives.py); each case is
a test of its own here, so a failure names its operation, dtype and size.
"""
import pytest

from conftest import run_job

WORLD_SIZES = (2, 3, 4)
DTYPES = ("f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64")
SIZES = (1, 1031)
OPERATIONS = ([f"all_reduce-{op}" for op in ("sum", "avg", "product", "min", "max")] +
              ["all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
               "broadcast", "reduce-sum", "reduce-max", "all_to_all", "all_to_all_single",
               "all_to_all_single-splits", "gather", "scatter", "send_recv", "isend_irecv"])
CASES = [f"{op}-{d}-n{n}" for op in OPERATIONS for d in DTYPES for n in SIZES] + \
        ["barrier", "all_reduce-sum-f32-large", "new_group-all_reduce"]

_jobs = {}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    def get(world):
        if world not in _jobs:
            _jobs[world] = run_job("collectives.py", world,
                                   tmp_path_factory.mktemp(f"collectives{world}"))
        return _jobs[world]
    return get


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("case", CASES)
def test_case(job, world, case):
    if case == "new_group-all_reduce":
        ranks = range(0, world, 2)
    else:
        ranks = range(world)
    result = job(world)
    assert result.codes == [0] * world, result.describe()
    for rank in ranks:
        assert result.results[rank].get(case) == "ok", \
            f"rank {rank}: {result.results[rank].get(case, 'not run')}"
