"""Writes every ```ccl block of a Markdown file to OUTDIR/<stem>-<n>.ccl.

Documentation examples tagged `ccl` are complete algorithms that must check
cleanly; fails when a document has none, so a renamed tag cannot silently
turn the test into one that checks nothing.
"""
import pathlib
import re
import sys


def main():
    doc, outdir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    blocks = re.findall(r"^```ccl\n(.*?)^```$", doc.read_text(), re.S | re.M)
    for index, block in enumerate(blocks):
        (outdir / f"{doc.stem}-{index}.ccl").write_text(block)
    print(f"{len(blocks)} examples")
    return 0 if blocks else 1


if __name__ == "__main__":
    sys.exit(main())
