"""What test_options.py and test_progress.py share: named scenarios, a check that says what failed with its
context, and a main that runs one scenario (exit 0 pass, 1 fail, 77 skip, 2 usage)."""
import os
import sys


class Failed(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def registry(scenarios):
    """A decorator that files a function in SCENARIOS under its name with dashes (progress_report: progress-report)."""
    def scenario(fn):
        scenarios[fn.__name__.replace("_", "-")] = fn
        return fn
    return scenario


def main(scenarios):
    name = os.path.basename(sys.argv[0])
    if len(sys.argv) != 2 or sys.argv[1] not in scenarios:
        print("usage: %s {%s}" % (name, ",".join(sorted(scenarios))))
        return 2
    try:
        scenarios[sys.argv[1]]()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0
