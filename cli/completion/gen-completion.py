#!/usr/bin/env python3
"""gen-completion.py OPTIONS_DEF SPY_OPTIONS_C OUTPUT

Writes the bash completion of cudnnspy from the command's option table (cli/util/cli-options.def), the one
that its --help is printed from; the words of a "list:VARIABLE" value come from the library's table
(shim/common/options.c), where that variable's accepted words are. Plain bash (complete -F, compgen): no
bash-completion helpers, so that it works where that package is not installed."""
import re
import sys

STRING = r'"(?:[^"\\]|\\.)*"'
FIELD = re.compile(r'\s*(%s|NULL|[A-Z_0-9|]+)\s*(,|$)' % STRING)


def c_string(tok):
    if tok == "NULL":
        return None
    if tok.startswith('"'):
        return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
    return tok


def fields(args, where):
    out, pos = [], 0
    while pos < len(args):
        m = FIELD.match(args, pos)
        if not m:
            sys.exit("%s: cannot read the entry from %r" % (where, args[pos:]))
        out.append(c_string(m.group(1)))
        pos = m.end()
    return out


def read_table(path):
    commands, options = [], []
    for n, line in enumerate(open(path), 1):
        m = re.match(r"^(CLI_COMMAND|CLI_OPTION)\((.*)\)\s*$", line)
        if not m:
            if re.match(r"^\s*CLI_", line):
                sys.exit("%s:%d: an entry not on one line" % (path, n))
            continue
        f = fields(m.group(2), "%s:%d" % (path, n))
        if m.group(1) == "CLI_COMMAND":
            if len(f) != 2:
                sys.exit("%s:%d: CLI_COMMAND takes 2 fields" % (path, n))
            commands.append(tuple(f))
        else:
            if len(f) != 6:
                sys.exit("%s:%d: CLI_OPTION takes 6 fields" % (path, n))
            cmd, name, arg, values, flags, _ = f
            options.append({"cmd": cmd, "name": name, "arg": arg, "values": values,
                            "hidden": "CLI_HIDDEN" in str(flags)})
    if not commands or not options:
        sys.exit("%s: no entries" % path)
    return commands, options


def spy_words(path, var):
    """The accepted words of VAR in the library's table, and all/none for a list of flags."""
    text = open(path).read()
    m = re.search(r'\{\s*"%s",\s*(SPY_OPT_\w+),\s*%s,\s*(%s)' % (re.escape(var), STRING, STRING), text)
    if not m:
        sys.exit("%s: no %s with its values" % (path, var))
    words = c_string(m.group(2)).split(",")
    if m.group(1) == "SPY_OPT_FLAGS":
        words += ["all", "none"]
    return words


def kind(values, spy):
    """The completion's kind word and its words: file, dir, user, command, words W..., list W..., attached W..."""
    if not values:
        return "none", []
    head, _, rest = values.partition(":")
    if head in ("file", "dir", "user", "command") and not rest:
        return head, []
    if head in ("words", "attached") and rest:
        return head, rest.split()
    if head == "list" and rest:
        return "list", spy_words(spy, rest)
    sys.exit("unknown completion %r" % values)


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    table, spy, output = sys.argv[1:4]
    commands, options = read_table(table)
    names = [c for c, _ in commands]
    lines = [
        "# bash completion for cudnnspy. Generated from cli/util/cli-options.def by cli/completion/gen-completion.py:",
        "# edit the table, not this file.",
        "",
        "# What the value of OPTION of COMMAND is completed with: sets _cudnnspy_kind and _cudnnspy_words.",
        "_cudnnspy_value() {",
        "\t_cudnnspy_kind= _cudnnspy_words=",
        '\tcase "$1 $2" in',
    ]
    for o in options:
        if o["arg"] is None:
            continue
        k, words = kind(o["values"], spy)
        lines.append("\t%s) _cudnnspy_kind=%s _cudnnspy_words=%s ;;" %
                     (sh_quote(o["cmd"] + " " + o["name"]), k, sh_quote(" ".join(words))))
    lines += ["\t*) return 1 ;;", "\tesac", "}", "",
              "# The options of COMMAND that are offered (aliases are not): sets _cudnnspy_words.",
              "_cudnnspy_options() {",
              '\tcase "$1" in']
    for cmd in ["cudnnspy"] + names:
        shown = [o["name"] for o in options if o["cmd"] == cmd and not o["hidden"]]
        lines.append("\t%s) _cudnnspy_words=%s ;;" % (sh_quote(cmd), sh_quote(" ".join(shown))))
    lines += ["\t*) _cudnnspy_words= ;;", "\tesac", "}", "",
              "# How the operands of COMMAND are completed: sets _cudnnspy_kind and _cudnnspy_words.",
              "_cudnnspy_operands() {",
              "\t_cudnnspy_words=",
              '\tcase "$1" in']
    for cmd, operands in commands:
        k, words = kind(operands, spy)
        lines.append("\t%s) _cudnnspy_kind=%s _cudnnspy_words=%s ;;" % (sh_quote(cmd), k, sh_quote(" ".join(words))))
    lines += ["\t*) _cudnnspy_kind=none ;;", "\tesac", "}", ""]
    lines.append("_cudnnspy_commands=%s" % sh_quote(" ".join(names)))
    lines.append(BODY)
    with open(output, "w") as f:
        f.write("\n".join(lines))


# The part that reads the command line: the same for any table.
BODY = r'''
# COMPREPLY for a value VAL of kind _cudnnspy_kind, each reply after PREFIX.
_cudnnspy_reply() {
	local val=$1 prefix=$2 head= w IFS=$' \t\n'
	local -a got=()
	# mapfile: one reply a line, a file name with spaces in it included; IFS is left as the user has it.
	case $_cudnnspy_kind in
	file) mapfile -t got < <(compgen -f -- "$val"); compopt -o filenames 2>/dev/null ;;
	dir) mapfile -t got < <(compgen -d -- "$val"); compopt -o filenames 2>/dev/null ;;
	user) mapfile -t got < <(compgen -u -- "$val") ;;
	command) mapfile -t got < <(compgen -c -- "$val") ;;
	words | attached) mapfile -t got < <(compgen -W "$_cudnnspy_words" -- "$val") ;;
	list)
		# A comma-separated list: the last word is the one completed.
		if [[ $val == *,* ]]; then
			head=${val%,*},
			val=${val##*,}
		fi
		mapfile -t got < <(compgen -W "$_cudnnspy_words" -- "$val")
		;;
	esac
	COMPREPLY=()
	for w in "${got[@]}"; do
		COMPREPLY+=("$prefix$head$w")
	done
}

_cudnnspy() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= i opt= val= prefix= dashdash=0 IFS=$' \t\n'
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# The subcommand: the first word that is no option (the command's own options take no value).
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			_cudnnspy_options cudnnspy
			mapfile -t COMPREPLY < <(compgen -W "$_cudnnspy_words" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_cudnnspy_commands" -- "$cur")
		fi
		return 0
	fi
	# run: what follows -- is the command that runs, and its arguments.
	if [[ $cmd == run ]]; then
		for ((i = i + 1; i < COMP_CWORD; i++)); do
			if [[ ${COMP_WORDS[i]} == -- ]]; then
				dashdash=$i
				break
			fi
		done
		if ((dashdash)); then
			_cudnnspy_kind=command
			((COMP_CWORD > dashdash + 1)) && _cudnnspy_kind=file
			_cudnnspy_reply "$cur" ""
			return 0
		fi
	fi
	# A value: --opt=VAL, split at = by readline (COMP_WORDBREAKS) or not, or --opt VAL.
	if [[ $cur == = ]] && ((COMP_CWORD >= 2)); then
		opt=$prev val=
	elif [[ $prev == = ]] && ((COMP_CWORD >= 3)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]} val=$cur
	elif [[ $cur == -*=* ]]; then
		opt=${cur%%=*} val=${cur#*=}
		[[ $COMP_WORDBREAKS == *=* ]] || prefix=$opt=
	fi
	if [[ -n $opt ]]; then
		_cudnnspy_value "$cmd" "$opt" && _cudnnspy_reply "$val" "$prefix"
		return 0
	fi
	if [[ $prev == -* ]] && _cudnnspy_value "$cmd" "$prev" && [[ $_cudnnspy_kind != attached ]]; then
		_cudnnspy_reply "$cur" ""
		return 0
	fi
	if [[ $cur == -* || ($cmd == run && -z $cur) ]]; then
		_cudnnspy_options "$cmd"
		[[ $cmd == run ]] && _cudnnspy_words+=" --"
		mapfile -t COMPREPLY < <(compgen -W "$_cudnnspy_words" -- "$cur")
		return 0
	fi
	# run takes no operand before --.
	[[ $cmd == run ]] && return 0
	_cudnnspy_operands "$cmd"
	_cudnnspy_reply "$cur" ""
	return 0
}
complete -F _cudnnspy cudnnspy
'''

if __name__ == "__main__":
    main()
