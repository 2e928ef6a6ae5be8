"""Builds cclc's Python package: the torch.distributed backend (cclc._C, a
C++ extension over the runtime's C API) with the runtime's shared library,
the cclc compiler and the algorithm library it compiles from, so that the
package needs nothing of the build tree once installed.

CCLC_BUILD_DIR names the CMake build directory holding lib/libcclc.so.0 and
bin/cclc (the CMake target `python` sets it); the sources are this
repository's.
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent


def build_dir() -> Path:
    path = os.environ.get("CCLC_BUILD_DIR")
    if not path:
        raise SystemExit("cclc: set CCLC_BUILD_DIR to the CMake build directory of cclc "
                         "(cmake --build build --target python does)")
    path = Path(path).resolve()
    for needed in ("lib/libcclc.so.0", "bin/cclc"):
        if not (path / needed).exists():
            raise SystemExit(f"cclc: {path / needed} is missing; build the targets cclcShared "
                             "and cclc first")
    return path


class BuildWithRuntime(build_py):
    """Copies the runtime library, the compiler and the algorithms into the package."""

    def run(self):
        super().run()
        build = build_dir()
        package = Path(self.build_lib) / "cclc"
        (package / "lib").mkdir(parents=True, exist_ok=True)
        (package / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(build / "lib/libcclc.so.0", package / "lib/libcclc.so.0")
        shutil.copy2(build / "bin/cclc", package / "bin/cclc")
        shutil.copytree(SOURCE / "algorithms", package / "algorithms", dirs_exist_ok=True)


extension = CppExtension(
    name="cclc._C",
    sources=["cclc/csrc/CallQueue.cpp", "cclc/csrc/MappedAllocator.cpp",
             "cclc/csrc/ProcessGroupCclc.cpp", "cclc/csrc/Module.cpp"],
    include_dirs=[str(SOURCE / "runtime/api")],
    library_dirs=[str(build_dir() / "lib")] if os.environ.get("CCLC_BUILD_DIR") else [],
    # The soname, not the development link, so no build-tree path is needed at run time.
    extra_link_args=["-l:libcclc.so.0", "-Wl,-rpath,$ORIGIN/lib"],
    # Line tables in place of Python's full debug information (-g), which
    # made these compiles over torch's headers half as slow again.
    extra_compile_args=["-O2", "-g1", "-std=c++20"],
)

setup(
    ext_modules=[extension],
    cmdclass={"build_py": BuildWithRuntime, "build_ext": BuildExtension.with_options(use_ninja=True)},
)
