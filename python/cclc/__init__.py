"""cclc: collective algorithms compiled from a small DSL, and the runtime that runs them.

`import cclc.torch` registers the torch.distributed backend "cclc".
"""
from pathlib import Path

__version__ = "0.1.0"

#: What the package ships beside its modules.
PACKAGE_DIR = Path(__file__).resolve().parent
COMPILER = PACKAGE_DIR / "bin" / "cclc"
ALGORITHMS = PACKAGE_DIR / "algorithms"
