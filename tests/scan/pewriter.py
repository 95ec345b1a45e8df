"""Minimal but valid PE32+ DLLs for the Windows scan's tests: an export table, a VS_VERSIONINFO
resource, a one-byte .text. Written from the PE/COFF specification (Microsoft's "PE Format" page), so the
tests need no cross-compiler; test_scan_windows.py's mingw scenario checks the scan against a real one.

make_dll(path, name, exports, version=(8, 9, 7, 29), ...) writes one; `imports` names the DLLs it imports,
`exe` makes it a program; the keyword `damage` makes the hostile variants (see DAMAGES)."""
import struct

FILE_ALIGN = 0x200
SECT_ALIGN = 0x1000
DAMAGES = ("truncated", "bogus-export-rva", "resource-loop", "huge-names", "no-pe", "huge-resource-count",
           "bogus-import-rva")


def _align(n, a):
    return (n + a - 1) // a * a


def _utf16z(s):
    return s.encode("utf-16-le") + b"\0\0"


def _block(key, value=b"", wtype=0, children=(), text=False):
    """One VS_VERSIONINFO block: wLength, wValueLength, wType, szKey, padding, value, padding, children."""
    head = struct.pack("<HHH", 0, 0, wtype) + _utf16z(key)
    head += b"\0" * (_align(len(head), 4) - len(head))
    body = head + value
    if children:
        body += b"\0" * (_align(len(body), 4) - len(body))
        for i, c in enumerate(children):
            body += c
            if i + 1 < len(children):
                body += b"\0" * (_align(len(body), 4) - len(body))
    vlen = len(value) // 2 if text else len(value)
    return struct.pack("<HH", len(body), vlen) + body[4:]


def version_info(version, product_version=None, description=None):
    a, b, c, d = version
    fixed = struct.pack("<13I", 0xFEEF04BD, 0x00010000, a << 16 | b, c << 16 | d, a << 16 | b, c << 16 | d,
                        0x3F, 0, 0x40004, 2, 0, 0, 0)
    strings = [("CompanyName", "NVIDIA Corporation"), ("FileVersion", "%d.%d.%d.%d" % version)]
    if description:
        strings.append(("FileDescription", description))
    if product_version:
        strings.append(("ProductVersion", product_version))
    table = _block("040904b0", children=[_block(k, _utf16z(v), 1, text=True) for k, v in strings], wtype=1)
    sfi = _block("StringFileInfo", children=[table], wtype=1)
    var = _block("VarFileInfo", children=[_block("Translation", struct.pack("<HH", 0x409, 1200))], wtype=1)
    return _block("VS_VERSION_INFO", fixed, 0, [sfi, var])


def _resources(rva, data, damage):
    """The .rsrc section: type 16 (RT_VERSION) -> id 1 -> language 0x409 -> the data."""
    def directory(entries):
        return struct.pack("<IIHHHH", 0, 0, 0, 0, 0, len(entries)) + b"".join(
            struct.pack("<II", i, t) for i, t in entries)
    root_off, name_off, lang_off, entry_off, data_off = 0, 24, 48, 72, 88
    root = directory([(16, 0x80000000 | name_off)])
    if damage == "huge-resource-count":
        root = struct.pack("<IIHHHH", 0, 0, 0, 0xFFFF, 0, 0xFFFF) + root[16:]
    # A loop: the name level points back at the root.
    name = directory([(1, 0x80000000 | (root_off if damage == "resource-loop" else lang_off))])
    lang = directory([(0x409, entry_off)])
    entry = struct.pack("<IIII", rva + data_off, len(data), 0, 0)
    return root + name + lang + entry + data


def _imports(rva, dlls):
    """The .idata section: one descriptor per DLL (each importing ordinal 1), then a zeroed one."""
    n = len(dlls)
    desc = b""
    thunks_off = 20 * (n + 1)
    names_off = thunks_off + 16 * 2 * n
    names = b""
    thunks = b""
    for i, dll in enumerate(dlls):
        ilt = rva + thunks_off + 32 * i
        desc += struct.pack("<IIIII", ilt, 0, 0, rva + names_off + len(names), ilt + 16)
        names += dll.encode() + b"\0"
        thunks += struct.pack("<QQ", 0x8000000000000001, 0) * 2
    return desc + b"\0" * 20 + thunks + names


def make_dll(path, name, exports, version=(8, 9, 7, 29), product_version=None, description=None,
             machine=0x8664, with_version=True, damage=None, imports=(), exe=False):
    assert damage is None or damage in DAMAGES
    text_rva, edata_rva, rsrc_rva, idata_rva = 0x1000, 0x2000, 0x3000, 0x4000
    # .edata: directory, function table, name pointers, ordinals, the DLL name, the names.
    names = sorted(e.encode() for e in exports)
    n = len(names)
    funcs_off = 40
    nptr_off = funcs_off + 4 * n
    ord_off = nptr_off + 4 * n
    strs_off = ord_off + 2 * n
    strs = name.encode() + b"\0"
    name_rvas = []
    for nm in names:
        name_rvas.append(edata_rva + strs_off + len(strs))
        strs += nm + b"\0"
    nnames = 0x0FFFFFFF if damage == "huge-names" else n
    ed = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, edata_rva + strs_off, 1, n, nnames,
                     edata_rva + funcs_off, edata_rva + nptr_off, edata_rva + ord_off)
    ed += b"".join(struct.pack("<I", text_rva) for _ in names)
    ed += b"".join(struct.pack("<I", r) for r in name_rvas)
    ed += b"".join(struct.pack("<H", i) for i in range(n))
    ed += strs
    rs = _resources(rsrc_rva, version_info(version, product_version, description), damage) if with_version else b""
    sections = [(b".text", text_rva, b"\xc3", 0x60000020), (b".edata", edata_rva, ed, 0x40000040)]
    if rs:
        sections.append((b".rsrc", rsrc_rva, rs, 0x40000040))
    if damage == "bogus-import-rva" and not imports:
        imports = ["KERNEL32.dll"]
    idata = _imports(idata_rva, list(imports)) if imports else b""
    if idata:
        sections.append((b".idata", idata_rva, idata, 0xC0000040))
    headers_size = FILE_ALIGN * 2
    raw = headers_size
    shdrs = b""
    body = b""
    for sname, srva, sdata, chars in sections:
        rawsize = _align(len(sdata), FILE_ALIGN)
        shdrs += struct.pack("<8sIIIIIIHHI", sname, len(sdata), srva, rawsize, raw, 0, 0, 0, 0, chars)
        body += sdata + b"\0" * (rawsize - len(sdata))
        raw += rawsize
    image_size = _align(sections[-1][1] + len(sections[-1][2]), SECT_ALIGN)
    dirs = [(0, 0)] * 16
    export_rva = 0x7FFF0000 if damage == "bogus-export-rva" else edata_rva
    dirs[0] = (export_rva, len(ed))
    if rs:
        dirs[2] = (rsrc_rva, len(rs))
    if idata:
        dirs[1] = (0x7FFF0000 if damage == "bogus-import-rva" else idata_rva, 20 * (len(imports) + 1))
    opt = struct.pack("<HBBIIIIIQIIHHHHHHIIIIHHQQQQII", 0x20B, 14, 0, 0x200, 0x400, 0, text_rva, text_rva,
                      0x180000000, SECT_ALIGN, FILE_ALIGN, 6, 0, 0, 0, 6, 0, 0, image_size, headers_size, 0,
                      2, 0x160, 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    opt += b"".join(struct.pack("<II", r, s) for r, s in dirs)
    assert len(opt) == 240
    coff = struct.pack("<4sHHIIIHH", b"PE\0\0", machine, len(sections), 0, 0, 0, len(opt), 0x0022 if exe else 0x2022)
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 0x40)
    head = dos + coff + opt + shdrs
    data = head + b"\0" * (headers_size - len(head)) + body
    if damage == "truncated":
        data = data[:0x40 + 24 + 100]
    if damage == "no-pe":
        data = b"MZ" + b"\0" * 100
    with open(path, "wb") as f:
        f.write(data)
