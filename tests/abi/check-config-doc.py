#!/usr/bin/env python3
"""The option table in shim/common/options.c and docs/configuration.md list the same variables."""
import re
import sys

table = open(sys.argv[1]).read()
doc = open(sys.argv[2]).read()
in_table = set(re.findall(r'\{\s*"(CUDNNSPY_[A-Z_]+)"', table))
in_doc = set(re.findall(r"^\| `(CUDNNSPY_[A-Z_]+)`", doc, re.M))
print("table: %s\ndoc: %s" % (sorted(in_table), sorted(in_doc)))
if not in_table:
    print("FAIL: no options found in the table")
    sys.exit(1)
if in_table != in_doc:
    print("FAIL: only in the table: %s; only in the doc: %s" % (sorted(in_table - in_doc), sorted(in_doc - in_table)))
    sys.exit(1)
