#!/usr/bin/env python3
"""check-rules-doc.py RULES_C CONFLICTS_MD: every rule of docs/conflicts.md has a one-line fix in the table
that the library's finding lines and the report use (shim/common/rules.c), and the table names no rule the page lacks."""
import re
import sys

table = re.findall(r'^\s*\{ "([a-z0-9-]+)",', open(sys.argv[1]).read(), re.M)
page = re.findall(r"^### `([a-z0-9-]+)`", open(sys.argv[2]).read(), re.M)
problems = ["%s: in docs/conflicts.md, no fix in shim/common/rules.c" % r for r in page if r not in table]
problems += ["%s: in shim/common/rules.c, not in docs/conflicts.md" % r for r in table if r not in page]
problems += ["%s: twice in shim/common/rules.c" % r for r in set(table) if table.count(r) > 1]
for p in problems:
    print(p)
print("%d rules, %d problems" % (len(page), len(problems)))
sys.exit(1 if problems else 0)
