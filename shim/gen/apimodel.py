"""The API description's vocabulary: parse shim/api/cudnn.api and check it.

Everything the generators know about cuDNN comes through here. A malformed
description stops the build with the file, line and reason.
"""
import re

BUILTIN = {
    "void": "void", "char": "int", "int": "int", "unsigned": "uint",
    "unsigned int": "uint", "size_t": "size", "double": "double",
    "float": "float", "int32_t": "int", "int64_t": "i64", "uint32_t": "uint",
    "unsigned long long": "u64",
}
TYPE_KINDS = ("handle", "descriptor", "object", "cuda", "struct", "value", "callback")
MAJORS = (8, 9)
RETURNS = ("cudnnStatus_t", "size_t", "const char *", "void")
DIRECTIONS = ("in", "out", "inout")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")


class ApiError(Exception):
    pass


class Type:
    def __init__(self, name, kind, extra):
        self.name, self.kind, self.extra = name, kind, extra
        self.majors = set()


class EnumValue:
    def __init__(self, name, value, majors):
        self.name, self.value, self.majors = name, value, majors


class Enum:
    def __init__(self, name):
        self.name, self.values = name, []
        self.index = 0


class Struct:
    def __init__(self, name):
        self.name, self.fields = name, []


class Param:
    """One parameter: direction, C type, name, and for arrays the count."""

    def __init__(self, direction, ctype, name, count, on_device=False, default=None):
        self.direction, self.ctype, self.name, self.count = direction, ctype, name, count
        # "default=VALUE": what cuDNN holds in a new descriptor for the value this Set's parameter sets (an enum
        # value's name or a number), which the spy's records show for a descriptor the program never set it on.
        self.default, self.default_value = default, None
        # "in device const int *labels[...]": GPU memory, whose values the spy never reads.
        self.on_device = on_device
        self.is_array = count is not None
        base = ctype.replace("const", " ").replace("*", " ")
        self.base = " ".join(base.split())
        self.pointers = ctype.count("*")
        self.count_index = -1
        # A count the call's own arguments do not hold (issue 30): dimension N of a descriptor as it was last set
        # ("[qDesc.dim0]": loWinIdx has one element per query time step), or the sum of an array's elements
        # ("[sum(hostLabelLengths)]": the labels of every sequence, one after another).
        self.count_desc_index, self.count_dim, self.count_sum_index = -1, -1, -1

    def decl(self):
        if self.ctype.endswith("*"):
            return self.ctype + self.name
        return "%s %s" % (self.ctype, self.name)


class Function:
    def __init__(self, name, ret, majors, lib, flags, params, stub=False):
        self.name, self.ret, self.majors, self.lib = name, ret, majors, lib
        self.flags, self.params, self.stub = flags, params, stub
        self.index = 0

    def proto_params(self):
        if not self.params:
            return "void"
        return ", ".join(p.decl() for p in self.params)


class Api:
    def __init__(self):
        self.types, self.enums, self.structs = {}, {}, {}
        self.functions = []

    def kind_of(self, base):
        """The kind of a parameter's base type: builtin, enum or a declared type."""
        if base in BUILTIN:
            return BUILTIN[base]
        if base in self.enums:
            return "enum"
        if base in self.structs:
            return "struct"
        if base in self.types:
            return self.types[base].kind
        return None

    def declared(self):
        return [f for f in self.functions if not f.stub]

    def stubs(self):
        return [f for f in self.functions if f.stub]


def _majors(tokens, where):
    out = set()
    for t in tokens:
        if t.startswith("@"):
            try:
                m = int(t[1:])
            except ValueError:
                raise ApiError("%s: bad version tag %r" % (where, t))
            if m not in MAJORS:
                raise ApiError("%s: unknown major %r" % (where, t))
            out.add(m)
    return out


def _parse_param(text, where):
    parts = text.split(None, 1)
    if len(parts) != 2 or parts[0] not in DIRECTIONS:
        raise ApiError("%s: a parameter is 'in|out|inout TYPE NAME[COUNT]', got %r" % (where, text))
    direction, rest = parts
    default = None
    m = re.match(r"^(.*\S)\s+default=(\S+)$", rest)
    if m:
        rest, default = m.group(1), m.group(2)
    on_device = rest.startswith("device ")
    if on_device:
        rest = rest[len("device "):]
    count = None
    m = re.match(r"^(.*?)\[([A-Za-z_0-9]*|[A-Za-z_0-9]+\.dim[0-7]|sum\([A-Za-z_0-9]+\))\]$", rest)
    if m:
        rest, count = m.group(1), m.group(2)
    m = re.match(r"^(.*?)([A-Za-z_][A-Za-z_0-9]*)$", rest)
    if not m or not m.group(1).strip():
        raise ApiError("%s: cannot split type and name in %r" % (where, text))
    return Param(direction, m.group(1).strip(), m.group(2), count, on_device, default)


def parse(path):
    api = Api()
    current = None
    with open(path) as f:
        lines = f.read().split("\n")
    for lineno, raw in enumerate(lines, 1):
        where = "%s:%d" % (path, lineno)
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[0] in " \t":
            if current is None:
                raise ApiError("%s: indented line outside a block" % where)
            current(line.strip(), where)
            continue
        tokens = line.split()
        head = tokens[0]
        current = None
        if head == "type":
            if len(tokens) < 3 or tokens[1] not in TYPE_KINDS:
                raise ApiError("%s: 'type KIND NAME [EXTRA]' with KIND in %s" % (where, TYPE_KINDS))
            t = Type(tokens[2], tokens[1], tokens[3] if len(tokens) > 3 else None)
            if t.kind == "descriptor" and not t.extra:
                raise ApiError("%s: a descriptor type names its kind" % where)
            api.types[t.name] = t
        elif head == "enum":
            e = Enum(tokens[1])
            api.enums[e.name] = e

            def add_value(text, where, e=e):
                m = re.match(r"^([A-Za-z_][A-Za-z_0-9]*)\s*=\s*(-?(?:0x)?[0-9a-fA-F]+)((?:\s+@\d+)*)$", text)
                if not m:
                    raise ApiError("%s: enum value is 'NAME = VALUE [@MAJOR]', got %r" % (where, text))
                majors = _majors(m.group(3).split(), where) or set(MAJORS)
                e.values.append(EnumValue(m.group(1), int(m.group(2), 0), majors))
            current = add_value
        elif head == "struct":
            s = Struct(tokens[1])
            api.structs[s.name] = s

            def add_field(text, where, s=s):
                m = re.match(r"^(.*?)\s*([A-Za-z_][A-Za-z_0-9]*)(\[\d+\])?$", text)
                if not m:
                    raise ApiError("%s: bad struct field %r" % (where, text))
                s.fields.append((m.group(1), m.group(2), m.group(3) or ""))
            current = add_field
        elif head in ("function", "stub"):
            if head == "function":
                m = re.match(r"^function\s+(cudnnStatus_t|size_t|const char \*|void)\s+(\w+)\s*(.*)$", line)
                if not m:
                    raise ApiError("%s: 'function RETURN NAME @MAJOR... [lib=L] [flags]' with RETURN in %s"
                                   % (where, RETURNS))
                ret, name, rest = m.group(1), m.group(2), m.group(3).split()
            else:
                ret, name, rest = None, tokens[1], tokens[2:]
            majors = _majors(rest, where)
            if not majors:
                raise ApiError("%s: %s names no cuDNN major (@8, @9)" % (where, name))
            lib, flags = None, set()
            for t in rest:
                if t.startswith("lib="):
                    lib = t[4:]
                elif not t.startswith("@"):
                    flags.add(t)
            fn = Function(name, ret, majors, lib, flags, [], stub=(head == "stub"))
            api.functions.append(fn)

            def add_param(text, where, fn=fn):
                if fn.stub:
                    raise ApiError("%s: a stub has no parameters" % where)
                fn.params.append(_parse_param(text, where))
            current = add_param
        else:
            raise ApiError("%s: unknown block %r" % (where, head))
    _check(api, path)
    return api


def _default_value(api, p, kind):
    if kind == "enum":
        return next((v.value for v in api.enums[p.base].values if v.name == p.default), None)
    try:
        return float(p.default) if kind in ("double", "float") else int(p.default)
    except ValueError:
        return None


def _check(api, path):
    seen = set()
    for i, e in enumerate(sorted(api.enums)):
        api.enums[e].index = i
    for i, fn in enumerate(api.functions):
        fn.index = i
        if fn.name in seen:
            raise ApiError("%s: %s is written down twice" % (path, fn.name))
        seen.add(fn.name)
        if not fn.name.startswith("cudnn"):
            raise ApiError("%s: %s is not a cudnn* name" % (path, fn.name))
        names = [p.name for p in fn.params]
        for p in fn.params:
            kind = api.kind_of(p.base)
            if kind is None:
                raise ApiError("%s: %s: unknown type %r of %s" % (path, fn.name, p.base, p.name))
            rule = re.match(r"^([A-Za-z_0-9]+)\.dim([0-7])$|^sum\(([A-Za-z_0-9]+)\)$", p.count or "")
            if rule and rule.group(1):
                d = rule.group(1)
                if d not in names or api.kind_of(fn.params[names.index(d)].base) != "descriptor":
                    raise ApiError("%s: %s: array %s counted by %s, which is no descriptor parameter" % (
                        path, fn.name, p.name, d))
                p.count_desc_index, p.count_dim = names.index(d), int(rule.group(2))
            elif rule:
                a = rule.group(3)
                if a not in names or not fn.params[names.index(a)].is_array or a == p.name:
                    raise ApiError("%s: %s: array %s counted by the sum of %s, which is no other array" % (
                        path, fn.name, p.name, a))
                p.count_sum_index = names.index(a)
            elif p.count:
                if p.count not in names:
                    raise ApiError("%s: %s: array %s counted by unknown %s" % (path, fn.name, p.name, p.count))
                p.count_index = names.index(p.count)
            if p.base in api.types:
                api.types[p.base].majors |= fn.majors
            if p.default is not None:
                p.default_value = _default_value(api, p, kind)
                if p.default_value is None or p.direction != "in" or p.pointers or p is fn.params[0] or \
                        api.kind_of(fn.params[0].base) != "descriptor":
                    raise ApiError("%s: %s: default=%s of %s: a Set's value parameter (after its descriptor) takes "
                                   "a number or a value of its enum" % (path, fn.name, p.default, p.name))
        if len(set(names)) != len(names):
            raise ApiError("%s: %s: two parameters share a name" % (path, fn.name))
    for s in api.structs.values():
        for ftype, fname, _ in s.fields:
            if api.kind_of(ftype) is None:
                raise ApiError("%s: struct %s: unknown type %r" % (path, s.name, ftype))
