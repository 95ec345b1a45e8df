#!/usr/bin/env python3
"""check-rules-doc.py RULES_C CONFLICTS_MD: every rule of docs/conflicts.md has a one-line fix in the table
that the library's finding lines and the report use (shim/common/rules.c), and the table names no rule the page lacks."""
import re
import sys

rules_c = open(sys.argv[1]).read()
table = re.findall(r'^\s*\{ "([a-z0-9-]+)",', rules_c, re.M)
# The Windows wording of some rules (cudnnspy scan --windows): each a rule of the table, once.
windows = re.findall(r'^\s*\{ \.id = "([a-z0-9-]+)",', rules_c, re.M)
page = re.findall(r"^### `([a-z0-9-]+)`", open(sys.argv[2]).read(), re.M)
problems = ["%s: in docs/conflicts.md, no fix in shim/common/rules.c" % r for r in page if r not in table]
problems += ["%s: in shim/common/rules.c, not in docs/conflicts.md" % r for r in table if r not in page]
problems += ["%s: twice in shim/common/rules.c" % r for r in set(table) if table.count(r) > 1]
problems += ["%s: Windows fix of a rule shim/common/rules.c's table lacks" % r for r in windows if r not in table]
problems += ["%s: two Windows fixes in shim/common/rules.c" % r for r in set(windows) if windows.count(r) > 1]
if not windows:
    problems.append("no Windows fixes found in shim/common/rules.c")
for p in problems:
    print(p)
print("%d rules, %d problems" % (len(page), len(problems)))
sys.exit(1 if problems else 0)
