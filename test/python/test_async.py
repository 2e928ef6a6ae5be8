"""Asynchronous calls: they return before they are done and complete in order."""
import pytest

from conftest import run_job


@pytest.mark.parametrize("numel,inline_bytes", [(1 << 18, None), (2, "0")],
                         ids=["large", "small-queued"])
def test_call_returns_before_peers_join(tmp_path, numel, inline_bytes):
    env = {"CCLC_INLINE_BYTES": inline_bytes} if inline_bytes else {}
    job = run_job("asynchronous.py", 3, tmp_path, "overlap", numel, timeout=120, env=env)
    assert job.codes == [0, 0, 0], job.describe()
    first = job.results[0]
    assert first["pending"], "the call was complete before the other ranks joined it"
    assert first["completed"]
    for result in job.results:
        assert result["result"] == [6.0, 6.0]
    assert first["doubled"] == [12.0, 12.0]


@pytest.mark.parametrize("world", [2, 4])
def test_calls_run_in_issue_order(tmp_path, world):
    job = run_job("asynchronous.py", world, tmp_path, "order", timeout=120)
    assert job.codes == [0] * world, job.describe()
    base = world * (world - 1) / 2
    for rank, result in enumerate(job.results):
        expected = [base + world * i for i in range(5)]
        expected[3] *= world  # reduced twice
        assert result["sums"] == expected, f"rank {rank}"
        assert result["lengths"] == [1, 1000, 1 << 16, 1 << 20, 3]
        assert result["broadcast_ok"]
        assert result["received"] == float((rank - 1) % world)


def test_pending_call_fails_when_a_peer_dies(tmp_path):
    job = run_job("asynchronous.py", 3, tmp_path, "killed", timeout=60)
    assert job.codes == [0, 0, 3], job.describe()
    for result in job.results[:2]:
        assert result["work"] == "DistBackendError", result
        assert result["future"] is not None, result
        assert result["seconds"] < 15, result
