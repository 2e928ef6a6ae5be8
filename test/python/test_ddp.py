"""DistributedDataParallel trains the same on cclc as on gloo."""
import pytest

from conftest import run_job


@pytest.mark.parametrize("world", (2, 3))
def test_ddp_losses_match_gloo(tmp_path, world):
    job = run_job("ddp.py", world, tmp_path)
    assert job.codes == [0] * world, job.describe()
    for rank, result in enumerate(job.results):
        assert len(result["cclc"]) >= 20
        assert result["cclc"] == pytest.approx(result["gloo"], rel=1e-4, abs=1e-5), f"rank {rank}"
        assert result["replicas_agree"], f"rank {rank}: replicas diverged under cclc"
        assert result["max_param_diff"] < 1e-4
    # The model learns: the loss goes down.
    assert job.results[0]["cclc"][-1] < job.results[0]["cclc"][0]
