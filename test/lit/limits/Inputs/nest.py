"""Writes FILE with COUNT copies of the element OPEN (closed by CLOSE) nested
inside one another, just before the line of FILE that first contains BEFORE.
"{i}" in OPEN becomes the copy's number in hex (for distinct ids).
Usage: nest.py FILE BEFORE OPEN CLOSE COUNT > OUT"""
import sys

path, before, open_tag, close_tag, count = sys.argv[1:6]
text = open(path).read()
at = text.index(before)
at = text.rindex("\n", 0, at) + 1
opens = "".join(open_tag.replace("{i}", "%x" % i) for i in range(int(count)))
sys.stdout.write(text[:at] + opens + close_tag * int(count) + "\n" + text[at:])
