# lit configuration for the tests that run collectives on CUDA devices:
# cclc-perf --gpu over every algorithm in algorithms/. Every test REQUIRES
# cuda-device; where the probe finds none (no GPU, no driver, a build without
# CUDA) the suite still runs and reports them as unsupported, saying why once.
import os

import lit.formats

config.name = "cclc-gpu"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cclc_obj_root, "test", "gpu")

config.substitutions.append(("%algorithms", os.path.join(config.cclc_src_root, "algorithms")))

# Every test forks up to 8 ranks onto the same GPUs, where their kernels are
# time-sliced; tests running side by side would only slow each other down
# past the runtime's timeouts.
lit_config.parallelism_groups["cclc-gpu"] = 1
config.parallelism_group = "cclc-gpu"

lit_config.load_config(config, os.path.join(config.test_source_root, "lit.tools.py"))
if "cuda-device" not in config.available_features:
    lit_config.note("GPU tests are skipped: " + config.gpu_absent)
