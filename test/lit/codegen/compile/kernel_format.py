"""The lit test format of test/lit/codegen/compile: every algorithm of the
library, generated for each kernel target and compiled.

One test per (algorithm, target), named <stem>.<target>, so lit runs them in
parallel and a new algorithm is covered without a new test file. The host
kernels are compiled with the C++ compiler, the CUDA kernels with nvcc to
PTX for compute_90 where the toolkit is (UNSUPPORTED elsewhere). Each
compile holds every tested type and operator, warnings are errors, and the
source includes its header first, so the header stands alone. The CUDA
compiles stop at PTX of one architecture: nvcc's front end checks the source
alike for each, and ptxas, most of a compile's time, gets the same
primitives from the runtime's GPU plan interpreter and the GPU tests'
generated kernels, which the build assembles for the architectures it
targets.
"""
import os
import shutil
import subprocess

import lit.formats
import lit.Test

TYPES = "f32,bf16,i32"
OPS = "sum,max"
# The first rank count an algorithm accepts is the one compiled: a power of
# two, else not.
RANK_COUNTS = (8, 5)
TARGETS = ("host", "cuda")


class GeneratedKernels(lit.formats.TestFormat):
    def __init__(self, config):
        self.algorithms = os.path.join(config.cclc_src_root, "algorithms")
        self.templates = os.path.join(config.cclc_src_root, "templates")
        self.cclc = os.path.join(config.cclc_tools_dir, "cclc")
        self.cxx = config.cxx_compiler
        self.nvcc = config.cuda_compiler

    def compile_command(self, target, out, stem):
        if target == "host":
            return [self.cxx, "-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-I", self.templates, "-I", out,
                    "-c", os.path.join(out, stem + ".cpp"), "-o", os.path.join(out, stem + ".o")]
        return [self.nvcc, "-std=c++20", "-I", self.templates, "-I", out,
                "-Werror", "all-warnings", "-Xcompiler=-Wall,-Wextra,-Werror",
                "-gencode", "arch=compute_90,code=compute_90",
                "-c", os.path.join(out, stem + ".cu"), "-o", os.path.join(out, stem + ".o")]

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for name in sorted(os.listdir(self.algorithms)):
            stem, ext = os.path.splitext(name)
            if ext == ".ccl":
                for target in TARGETS:
                    yield lit.Test.Test(testSuite, path_in_suite + (stem + "." + target,),
                                        localConfig)

    def execute(self, test, litConfig):
        stem, target = test.path_in_suite[-1].rsplit(".", 1)
        if target == "cuda" and "cuda" not in test.config.available_features:
            return lit.Test.UNSUPPORTED, "no CUDA toolkit (the 'cuda' feature)"
        out = test.getExecPath()
        shutil.rmtree(out, ignore_errors=True)
        log = []

        def run(command):
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
            log.append("$ " + " ".join(command) + "\n" + done.stdout)
            return done.returncode == 0

        source = os.path.join(self.algorithms, stem + ".ccl")
        generated = any(
            run([self.cclc, "compile", source, "--nranks", str(n), "--emit=" + target,
                 "--dtypes", TYPES, "--ops", OPS, "-o", out])
            for n in RANK_COUNTS)
        if generated and run(self.compile_command(target, out, stem)):
            return lit.Test.PASS, ""
        return lit.Test.FAIL, "\n".join(log)
