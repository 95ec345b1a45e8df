#!/usr/bin/env python3
"""check-help-agree.py CUDNNSPY MAN_PAGE CUDNNSPY_MD CONFIGURATION_MD README_MD

What the command says of itself (`--help` of each subcommand, `--help-env`, driven by the option tables in
cli/ and shim/common/options.c) against what the man page, docs/cudnnspy.md, docs/configuration.md and the README say:
every option of every subcommand is in the top-level help, the man page and docs/cudnnspy.md; `help CMD` says
what `CMD --help` says; each variable has one default, the same in --help-env, the configuration page and the
README's table."""
import re
import subprocess
import sys

exe, man, md, conf, readme = sys.argv[1:6]
problems = []


def out(*args):
    return subprocess.run([exe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True).stdout


def options(text):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text))


man_text = open(man).read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
md_text = open(md).read()
top = out("--help")
for cmd in ("run", "report", "repro", "dump", "scan"):
    own = out(cmd, "--help")
    if not own:
        problems.append("%s --help prints nothing" % cmd)
    if out("help", cmd) != own:
        problems.append("cudnnspy help %s differs from cudnnspy %s --help" % (cmd, cmd))
    for opt in sorted(options(own) - {"--help"}):
        for name, text in (("the top-level --help", top), ("the man page", man_text), ("docs/cudnnspy.md", md_text)):
            if opt not in text:
                problems.append("%s %s: not in %s" % (cmd, opt, name))

env = out("--help-env")
defaults = dict(re.findall(r"^(CUDNNSPY_[A-Z_]+)\n    default: (\S+)", env, re.M))
if len(defaults) < 10:
    problems.append("--help-env lists %d variables" % len(defaults))


def table_defaults(text):
    rows = re.findall(r"^\| `(CUDNNSPY_[A-Z_]+)` \|(.*)$", text, re.M)
    got = {}
    for name, rest in rows:
        cells = [c.strip().strip("`") for c in rest.split("|")]
        got[name] = cells
    return got


conf_rows = table_defaults(open(conf).read())
readme_rows = table_defaults(open(readme).read())
for name, default in sorted(defaults.items()):
    if name in conf_rows and conf_rows[name][1] != default:
        problems.append("%s: default %r in --help-env, %r in docs/configuration.md" % (name, default, conf_rows[name][1]))
    if name in readme_rows and readme_rows[name][0] != default:
        problems.append("%s: default %r in --help-env, %r in the README" % (name, default, readme_rows[name][0]))
for p in problems:
    print(p)
print("%d variables, %d problems" % (len(defaults), len(problems)))
sys.exit(1 if problems else 0)
