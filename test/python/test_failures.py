"""Mismatches, dead peers and misuse raise Python exceptions within the timeout."""
from conftest import run_job

# The group's timeout in workers/failures.py, and the slack allowed past it.
TIMEOUT_S = 5
SLACK_S = 10


def test_mismatched_sizes_raise(tmp_path):
    job = run_job("failures.py", 2, tmp_path, "mismatch", timeout=60)
    assert job.codes == [0, 0], job.describe()
    for rank, result in enumerate(job.results):
        assert result["raised"] == "DistBackendError", f"rank {rank}: {result}"
        assert result["seconds"] < TIMEOUT_S + SLACK_S
    # The rank that received the other call's message names both calls.
    assert any(" where rank " in r["message"] and "allreduce of 16 KiB" in r["message"]
               for r in job.results), job.results


def test_killed_rank_raises_within_timeout(tmp_path):
    job = run_job("failures.py", 3, tmp_path, "killed", timeout=60)
    assert job.codes == [0, 0, 3], job.describe()
    for rank, result in enumerate(job.results[:2]):
        assert result["raised"] == "DistBackendError", f"rank {rank}: {result}"
        assert result["seconds"] < TIMEOUT_S + SLACK_S, result
        assert "rank" in result["message"]


def test_misuse_raises_and_leaves_group_working(tmp_path):
    job = run_job("failures.py", 2, tmp_path, "misuse", timeout=60)
    assert job.codes == [0, 0], job.describe()
    for result in job.results:
        assert result["dtype"]["raised"] == "RuntimeError"
        assert "Short" in result["dtype"]["message"] or "int16" in result["dtype"]["message"]
        assert result["operator"]["raised"] == "RuntimeError"
        assert "not supported" in result["operator"]["message"]
        assert result["strided"]["raised"] == "RuntimeError"
        assert "contiguous" in result["strided"]["message"]
        assert result["after"] == [2.0, 2.0, 2.0]
