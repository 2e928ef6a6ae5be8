# What every cclc lit suite needs of the build, loaded by the suite's
# lit.cfg.py once its site config has set config.cclc_tools_dir: the build's
# tools (cclc, cclc-perf) and LLVM's (FileCheck, not) first on PATH, loopback
# as the ranks' interface, the caller's choice of GPUs, and whether there is a CUDA device that
# cclc-perf --gpu can use. Where `cclc-perf --gpu-probe` finds one, the
# feature "cuda-device" is added; otherwise config.gpu_absent holds the
# probe's reason (no GPU, no driver, a build without CUDA).
import os
import subprocess

config.environment["PATH"] = os.pathsep.join([
    config.cclc_tools_dir, config.llvm_tools_dir,
    config.environment.get("PATH", os.environ["PATH"])])
# Every job of a test runs all its ranks on this host and binds loopback only
# (the two-host test sets its namespaces' interface itself).
config.environment["CCLC_SOCKET_IFNAME"] = "=lo"
# The tests see the GPUs the probe below sees.
for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

try:
    # Bounded, so that a wedged driver fails the probe instead of the run;
    # making a context on every GPU of a large machine takes seconds.
    probe = subprocess.run([os.path.join(config.cclc_tools_dir, "cclc-perf"), "--gpu-probe"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
    found = probe.returncode == 0
    config.gpu_absent = probe.stdout.strip() or "cclc-perf --gpu-probe exited with %d" % \
        probe.returncode
except (OSError, subprocess.TimeoutExpired) as error:
    found = False
    config.gpu_absent = "cclc-perf --gpu-probe could not run: %s" % error
if found:
    config.available_features.add("cuda-device")
