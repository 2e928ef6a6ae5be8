# lit configuration for cclc's FileCheck tests.
import os
import subprocess
import sys

import lit.formats

config.name = "cclc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ccl", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cclc_obj_root, "test", "lit")
# lit starts the tests that took longest first, by the times it records in
# the build; a build without them reads .lit_test_times.txt beside this file,
# the slowest tests of a run (nvcc compiles), so that a fresh build does not
# start a minute-long compile last and leave the other workers idle.

# cclc and the LLVM tools (FileCheck, not) come first on PATH; "cuda-device"
# where cclc-perf --gpu can run (the GPU suite, test/gpu, says why not where
# it cannot).
lit_config.load_config(config, os.path.join(config.cclc_src_root, "test", "gpu", "lit.tools.py"))

config.substitutions.append(("%algorithms", os.path.join(config.cclc_src_root, "algorithms")))
config.substitutions.append(("%topologies",
                             os.path.join(config.cclc_src_root, "test", "topologies")))
config.substitutions.append(("%cmake", config.cmake))
config.substitutions.append(("%cclc_build", config.cclc_obj_root))
config.substitutions.append(("%cclc_src", config.cclc_src_root))
config.substitutions.append(("%shared", os.path.join(config.shared_dir, "topologies")))
# The C++ compiler of the build, for tests that build generated kernels.
config.substitutions.append(("%cxx", config.cxx_compiler))

# The comparison with Open MPI and Gloo exists where both were found.
if os.path.exists(os.path.join(config.cclc_tools_dir, "cclc-allreduce-bench")):
    config.available_features.add("allreduce-bench")

# Tests over the real machines beside the checkout need them to be there.
if os.path.isdir(os.path.join(config.shared_dir, "topologies")):
    config.available_features.add("shared-topologies")
if config.have_nccl_api:
    config.available_features.add("nccl-api")
    # Built where the toolkit has the real libnccl.so to link against.
    if os.path.exists(os.path.join(config.cclc_tools_dir, "nccl-host-check-real")):
        config.available_features.add("real-nccl")
        config.substitutions.append(("%real_nccl", config.real_nccl))
if config.have_cuda:
    config.available_features.add("cuda")
    config.substitutions.append(("%nvcc", config.cuda_compiler))

# The two-host runtime test needs to make network namespaces (root, `ip`, a
# kernel that allows it); where it cannot, say why once.
two_hosts = os.path.join(config.test_source_root, "runtime", "Inputs", "two-hosts.py")
probe = subprocess.run([sys.executable, two_hosts, "--probe"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
if probe.returncode == 0:
    config.available_features.add("netns")
else:
    lit_config.note("the two-host runtime test is skipped: " + probe.stdout.strip())
