#!/usr/bin/env python3
"""The command line's one option table (cli/util/cli-options.def) against what uses it: the parsers, the
help, and the bash completion generated from it.

usage: test_options.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip.
"""
import os
import re
import subprocess
import sys

from clitest import check, main, registry

E = os.environ
CLI = E.get("CLI_EXE", "")
TABLE = E.get("OPTIONS_DEF", "")
COMPLETION = E.get("COMPLETION", "")
SRC = E.get("SOURCE_ROOT", "")

# Where each subcommand's parser is; main.c parses run and the command's own options.
PARSERS = {"run": "cli/main.c", "report": "cli/report/report.c", "repro": "cli/repro/repro.c",
           "dump": "cli/decode/dump.c", "scan": "cli/scan/scan.c"}

SCENARIOS = {}
scenario = registry(SCENARIOS)


def table():
    """{command: {name: (arg, values, hidden)}} from the .def, read as the generator reads it."""
    out = {}
    for line in open(TABLE):
        m = re.match(r'^CLI_OPTION\("([a-z]+)", "(-[a-z-]*)", (NULL|"[^"]*"), "([^"]*)", (0|CLI_HIDDEN),', line)
        if m:
            arg = None if m.group(3) == "NULL" else m.group(3).strip('"')
            out.setdefault(m.group(1), {})[m.group(2)] = (arg, m.group(4), m.group(5) == "CLI_HIDDEN")
    check(len(out) == 6 and all(out.values()), "the table has options of 6 commands", repr(sorted(out)))
    return out


def run(argv):
    p = subprocess.run([CLI] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=60)
    print("$ cudnnspy %s -> %d" % (" ".join(argv), p.returncode))
    return p


def sample(arg, values):
    """A value the parser takes without doing anything with it yet."""
    if values.startswith(("words:", "list:")):
        return values.split(":", 1)[1].split()[0] if values.startswith("words:") else "summary"
    if values == "dir":
        return "/"
    if values == "user":
        return "root"
    if values == "file":
        return "some-file"
    return "1"


@scenario
def parsers_agree():
    """Each parser takes exactly the table's options of its subcommand."""
    t = table()
    for cmd, path in PARSERS.items():
        text = open(os.path.join(SRC, path)).read()
        found = re.findall(r'(?:strn?cmp\(\w+(?:\[\w+\])?, |option_value\(argc, argv, &i, )"(-[^"]*)"', text)
        taken = {f.split("=")[0] for f in found if f not in ("-", "--")}
        want = set(t[cmd])
        if cmd == "run":
            want |= set(t["cudnnspy"])
        check(taken == want, "%s: the parser takes %s, the table lists %s" % (cmd, sorted(taken), sorted(want)))
    # And at run time: every option is taken (the parser goes on past it to the next word) or does its job.
    for cmd, opts in sorted(t.items()):
        for name, (arg, values, _) in sorted(opts.items()):
            if name in ("--help", "-h", "--version", "--help-env"):
                p = run(([] if cmd == "cudnnspy" else [cmd]) + [name])
                check(p.returncode == 0 and p.stdout, "%s %s: exit 0 and text" % (cmd, name), p.stderr)
                continue
            if arg and arg.startswith("["):
                argv = [cmd, name + "=" + values.split(":", 1)[1].split()[0]]
            else:
                argv = [cmd, name] + ([sample(arg, values)] if arg else [])
            p = run(argv + ["--zz-not-an-option"])
            check("'--zz-not-an-option'" in p.stderr and p.returncode == 2,
                  "%s: the parser took %s and went on to the next word" % (cmd, " ".join(argv[1:])), p.stderr)


@scenario
def help_from_table():
    """Each --help lists the table's options of its subcommand that are not aliases, and no other."""
    t = table()
    for cmd in PARSERS:
        text = run([cmd, "--help"]).stdout
        listed = set(re.findall(r"^  (-[a-z-]*[a-z])", text, re.M))
        want = {n for n, (_, _, hidden) in t[cmd].items() if not hidden}
        if cmd == "run":
            want |= {n for n, (_, _, hidden) in t["cudnnspy"].items() if not hidden}
        check(listed == want, "%s --help lists %s, the table %s" % (cmd, sorted(listed), sorted(want)), text)
        for n, (arg, _, hidden) in t[cmd].items():
            if not hidden and arg:
                check(re.search(r"^  %s ?%s " % (re.escape(n), re.escape(arg)), text, re.M),
                      "%s --help: %s with its %s" % (cmd, n, arg), text)


def complete(*words, breaks=None, cwd=None):
    """COMPREPLY for a command line whose last word is the one completed, in a bare bash."""
    script = 'source "$1"; shift; %sCOMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cudnnspy; ' \
             'printf "%%s\\n" "${COMPREPLY[@]}"' % ("COMP_WORDBREAKS=%s; " % breaks if breaks is not None else "")
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", COMPLETION] + list(words),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=cwd, timeout=30)
    check(p.returncode == 0 and not p.stderr, "%r: the completion runs quietly" % (words,), p.stderr)
    got = [w for w in p.stdout.split("\n") if w]
    print("complete %r -> %r" % (words, got))
    return got


@scenario
def completion():
    t = table()
    check(os.path.isfile(COMPLETION), "the generated completion is at %s" % COMPLETION)
    src = open(COMPLETION).read()
    check("complete -F _cudnnspy cudnnspy" in src, "it registers _cudnnspy for cudnnspy")
    for helper in ("_init_completion", "_filedir", "_get_comp_words_by_ref"):
        check(helper not in src, "it needs no bash-completion helper (%s)" % helper)

    check(complete("cudnnspy", "re") == ["report", "repro"], "re: report and repro")
    check(complete("cudnnspy", "") == ["run", "report", "repro", "dump", "scan", "help"], "every subcommand")
    check(complete("cudnnspy", "--help") == ["--help", "--help-env"], "the command's own options")
    for cmd in PARSERS:
        want = [n for n, (_, _, hidden) in t[cmd].items() if not hidden]
        got = complete("cudnnspy", cmd, "--")
        if cmd == "run":
            want.append("--")
        check(sorted(got) == sorted(w for w in want if w.startswith("--")),
              "%s --: the table's options, no alias" % cmd, repr(got))
    check(complete("cudnnspy", "report", "--json", "--c") == ["--chrome", "--compare"], "after another option")
    # --stderr's words are the library's (shim/common/options.c), with all and none.
    words = ["banner", "failures", "summary", "probing", "all", "none"]
    # readline splits --stderr= at = (COMP_WORDBREAKS): the words come as --stderr, = and what follows.
    check(complete("cudnnspy", "run", "--stderr", "=") == words, "run --stderr=: the words")
    check(complete("cudnnspy", "run", "--stderr", "=", "ba") == ["banner"], "run --stderr=ba")
    check(complete("cudnnspy", "run", "--stderr", "") == words, "run --stderr WORD")
    check(complete("cudnnspy", "run", "--stderr", "banner,f") == ["banner,failures"], "the list's last word")
    # Where = breaks no word, the reply is the whole word.
    check(complete("cudnnspy", "run", "--stderr=su", breaks="' '") == ["--stderr=summary"], "--stderr=su whole")
    check(complete("cudnnspy", "run", "--format", "") == ["json", "binary"], "run --format")
    check(complete("cudnnspy", "run", "--drop-in", "=") == ["9", "8"], "run --drop-in=")
    got = complete("cudnnspy", "run", "--drop-in", "")
    check("--" in got and "9" not in got, "--drop-in's value is written on to it only: next, an option or --")
    check(complete("cudnnspy", "repro", "--fill", "n") == ["nan"], "repro --fill")
    check(complete("cudnnspy", "help", "r") == ["run", "report", "repro"], "help's words")
    check(complete("cudnnspy", "scan", "--user", "roo") == ["root"], "scan --user: user names")

    # File names: for a file operand, a file option's value, and the arguments of run's command.
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cudnnspy-complete-%d" % os.getpid())
    os.makedirs(os.path.join(d, "records-dir"), exist_ok=True)
    for f in ("a.jsonl", "a b.jsonl", "other.txt"):
        open(os.path.join(d, f), "w").close()
    try:
        check(sorted(complete("cudnnspy", "report", "a", cwd=d)) == ["a b.jsonl", "a.jsonl"],
              "report's operands: file names, one with a space whole")
        check(complete("cudnnspy", "dump", "rec", cwd=d) == ["records-dir"], "dump: a directory")
        check(complete("cudnnspy", "report", "--chrome", "oth", cwd=d) == ["other.txt"], "--chrome FILE")
        check(complete("cudnnspy", "repro", "--cudnn", "", cwd=d) == ["records-dir"], "--cudnn DIR: directories")
        check("bash" in complete("cudnnspy", "run", "--", "ba", cwd=d), "run -- COMMAND: programs")
        check(complete("cudnnspy", "run", "--", "bash", "oth", cwd=d) == ["other.txt"], "its arguments: files")
        check(complete("cudnnspy", "run", "x", cwd=d) == [], "run: no operand before --")
    finally:
        for f in ("a.jsonl", "a b.jsonl", "other.txt"):
            os.unlink(os.path.join(d, f))
        os.rmdir(os.path.join(d, "records-dir"))
        os.rmdir(d)


if __name__ == "__main__":
    sys.exit(main(SCENARIOS))
