"""cclc.torch.use_mapped_memory: CPU tensors in memory the ranks of a host map."""
import pytest

from conftest import run_job

DTYPES = ("f32", "f64", "bf16", "i32", "i64")
SIZES = (70001, 300007)


def test_allocator(tmp_path):
    job = run_job("mapped_allocator.py", 1, tmp_path, timeout=120)
    assert job.codes == [0], job.describe()
    r = job.results[0]
    # Tensors of min_bytes and more live in cclc buffers from then on; smaller
    # ones, and those made before, in PyTorch's memory.
    assert r["big_mapped"] and r["big_values"]
    assert not r["small_mapped"] and not r["before_mapped"]
    assert r["live"] == {"live_bytes": 4 << 20, "idle_bytes": 0, "buffers": 1}
    # A freed buffer is kept, and serves the next tensor of its size.
    assert r["after_free"] == {"live_bytes": 0, "idle_bytes": 4 << 20, "buffers": 1}
    assert r["reused"]
    # A buffer that would take the cache past its size is freed at once.
    assert r["after_huge"] == {"live_bytes": 4 << 20, "idle_bytes": 0, "buffers": 1}
    assert r["grad_mapped"] and r["grad_values"]
    assert r["emptied"] == {"live_bytes": 0, "idle_bytes": 0, "buffers": 0}
    assert not r["off_mapped"]


@pytest.mark.parametrize("world", (2, 3))
def test_collectives_on_mapped_tensors(tmp_path, world):
    job = run_job("mapped.py", world, tmp_path, env={"CCLC_DEBUG": "INFO"})
    assert job.codes == [0] * world, job.describe()
    # Calls on mapped tensors ran the plans chosen for mapped buffers (cclc
    # compile --cpu): at 2 ranks halving-doubling serves the 280 KB all_reduce
    # that the heap's plans give the butterfly.
    if world == 2:
        assert "runs halving_doubling_allreduce (plan " in job.logs[0], job.logs[0]
        assert "halving-doubling-allreduce.mapped.json, plan interpreter, 1 channel, mapped " \
            "buffers" in job.logs[0], job.logs[0]
    for rank, result in enumerate(job.results):
        cases = result["cases"]
        for d in DTYPES:
            for n in SIZES:
                names = [f"all_reduce-sum-{d}-n{n}", f"all_reduce-max-{d}-n{n}",
                         f"all_gather-{d}-n{n}", f"reduce_scatter-{d}-n{n}",
                         f"broadcast-{d}-n{n}"] + ([f"reduce-{d}-n{n}"] if rank == 0 else [])
                for name in names:
                    assert cases.get(name) == "ok", f"rank {rank} {name}: {cases.get(name)}"
        # The messages went between mapped buffers: each rank mapped its peers'.
        assert result["peer_mappings"] > 0, f"rank {rank} mapped no peer buffer"
        assert result["stats"]["buffers"] > 0


def test_ddp_on_mapped_memory(tmp_path):
    job = run_job("ddp.py", 2, tmp_path, "mapped")
    assert job.codes == [0, 0], job.describe()
    for rank, result in enumerate(job.results):
        assert result["cclc"] == pytest.approx(result["gloo"], rel=1e-4, abs=1e-5), f"rank {rank}"
        assert result["replicas_agree"], f"rank {rank}: replicas diverged under cclc"
        assert result["mapped_buffers"] > 0


def test_ddp_buckets_from_the_backend(tmp_path):
    """With DDP_DISABLE_COMM_MEM=0 DDP takes its buckets from the backend:
    cclc's are mapped (and trained on exactly as heap buckets), gloo's not."""
    job = run_job("ddp.py", 2, tmp_path, "buckets")
    assert job.codes == [0, 0], job.describe()
    for rank, result in enumerate(job.results):
        assert result["cclc"] == pytest.approx(result["gloo"], rel=1e-4, abs=1e-5), f"rank {rank}"
        assert result["replicas_agree"], f"rank {rank}: replicas diverged under cclc"
        assert result["cclc_bucket_bytes"] > 0, f"rank {rank}: DDP's buckets were not mapped"
        assert result["gloo_bucket_bytes"] == 0, f"rank {rank}: gloo's buckets were mapped"
