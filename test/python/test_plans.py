"""Which plans serve a group: the library's, compiled for its size, or CCLC_PLAN_DIR's."""
import subprocess

import cclc
import cclc.plans
from conftest import run_job


def test_library_plans_serve_every_call(tmp_path):
    job = run_job("sizes.py", 4, tmp_path / "job", env={"CCLC_DEBUG": "INFO"})
    assert job.codes == [0] * 4, job.describe()
    assert all(r["ok"] for r in job.results)
    log = job.logs[0]
    assert "falling back" not in log, log
    # The cost model's choice at 4 ranks: few rounds for small messages
    # (the butterfly, the binomial trees), bandwidth-optimal halving-doubling
    # and the pipelined ring broadcast for large ones.
    assert "runs butterfly_allreduce" in log, log
    assert "runs halving_doubling_allreduce" in log, log
    assert "runs binomial_broadcast" in log and "runs ring_broadcast" in log, log
    assert "runs binomial_reduce" in log, log
    cached = tmp_path / "cache" / cclc.plans.library_key() / "n4"
    assert (cached / "COMPLETE").exists()
    # Every algorithm twice, for mapped and unmapped buffers; those with a
    # root once per root.
    assert (cached / "ring-allreduce.mapped.json").exists()
    assert (cached / "ring-allreduce.unmapped.json").exists()
    for rooted in ("binomial-broadcast", "ring-broadcast", "binomial-reduce", "ring-reduce"):
        assert {p.name for p in cached.glob(f"{rooted}.*.root*.json")} == \
            {f"{rooted}.{kind}.root{r}.json" for kind in ("mapped", "unmapped") for r in range(4)}
    # The calls on heap tensors ran the plans chosen for unmapped buffers.
    assert ".mapped." not in log, log


def test_plans_that_do_not_fit_are_skipped(tmp_path):
    job = run_job("sizes.py", 3, tmp_path / "job")
    assert job.codes == [0] * 3, job.describe()
    skipped = (tmp_path / "cache" / cclc.plans.library_key() / "n3" / "SKIPPED").read_text()
    assert "butterfly-allreduce.ccl" in skipped and "pow2" in skipped, skipped


def test_plan_dir_overrides_library(tmp_path):
    plans = tmp_path / "plans"
    plans.mkdir()
    subprocess.run([str(cclc.COMPILER), "compile", str(cclc.ALGORITHMS / "ring-allreduce.ccl"),
                    "--nranks", "2", "--emit=json", "-o", str(plans / "ring.json")], check=True)
    job = run_job("sizes.py", 2, tmp_path / "job",
                  env={"CCLC_DEBUG": "INFO", "CCLC_PLAN_DIR": str(plans)})
    assert job.codes == [0] * 2, job.describe()
    log = job.logs[0]
    assert "runs ring_allreduce (plan " in log, log
    # Broadcast has no plan there: the runtime's built-in ring serves it, and says so.
    assert "falling back" in log, log


def test_empty_plan_dir_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    job = run_job("sizes.py", 2, tmp_path / "job", env={"CCLC_PLAN_DIR": str(tmp_path / "empty")},
                  timeout=120)
    assert job.codes != [0, 0]
    assert "holds no *.json plan" in job.logs[0], job.describe()
