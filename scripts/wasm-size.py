#!/usr/bin/env python3
"""What the npm package's .wasm is made of: its code grouped by category (from the function
names), raw and gzipped, and its data section. The table of docs/performance.md, "Size".

Usage, after ./scripts/build-pkg.sh (which leaves the module before wasm-opt, still with its
name section, in target/pkg-build):

    python3 scripts/wasm-size.py target/pkg-build/web/ctxkit_bg.wasm

Each category's function bodies are gzipped together, so the gzipped column is what that part
costs on its own; the shipped module (after wasm-opt, without names) gzips as one file, so the
column's sum is near, not equal to, build-pkg.sh's figure."""
import collections
import gzip
import re
import sys

def leb(b, i):
    r = s = 0
    while True:
        x = b[i]; i += 1; r |= (x & 0x7f) << s; s += 7
        if x < 0x80: return r, i

def sections(b):
    i = 8
    while i < len(b):
        sid = b[i]; i += 1; sz, i = leb(b, i)
        yield sid, b[i:i+sz]; i += sz

def parse(path):
    b = open(path, 'rb').read()
    imports = 0; bodies = []; names = {}; data = b''; custom = 0
    for sid, body in sections(b):
        if sid == 2:
            n, j = leb(body, 0)
            for _ in range(n):
                l, j = leb(body, j); j += l
                l, j = leb(body, j); j += l
                kind = body[j]; j += 1
                if kind == 0: imports += 1; _, j = leb(body, j)
                elif kind == 1: j += 1; f, j = leb(body, j); _, j = leb(body, j); j = (leb(body, j)[1] if f & 1 else j)
                elif kind == 2: f, j = leb(body, j); _, j = leb(body, j); j = (leb(body, j)[1] if f & 1 else j)
                elif kind == 3: j += 2
                else: raise SystemExit('import kind %d' % kind)
        elif sid == 10:
            n, j = leb(body, 0)
            for _ in range(n):
                sz, j = leb(body, j); bodies.append(body[j:j+sz]); j += sz
        elif sid == 11:
            data = body
        elif sid == 0:
            l, j = leb(body, 0); nm = body[j:j+l]; j += l
            if nm == b'name':
                while j < len(body):
                    sub = body[j]; j += 1; sz, j = leb(body, j); end = j + sz
                    if sub == 1:
                        n, k = leb(body, j)
                        for _ in range(n):
                            idx, k = leb(body, k); l, k = leb(body, k)
                            names[idx] = legacy(body[k:k+l].decode('utf8', 'replace')); k += l
                    j = end
    return imports, bodies, names, data

def legacy(name):
    """A v0 symbol name (the nightly build's) in the legacy form the categories were made for:
    without each crate's hash (`serde_json[c68811da35c26a70]::de`) and without generic
    arguments (`Map<Enumerate<..>, F>` is `Map`), so a function is filed under its own path,
    not under the types it was compiled for."""
    name = re.sub(r'\[[0-9a-f]{16}\]', '', name)
    out = []; depth = 0
    for i, ch in enumerate(name):
        if ch == '<' and (depth or (i and (name[i - 1].isalnum() or name[i - 1] in '_:'))):
            depth += 1
            continue
        if ch == '>' and depth:
            depth -= 1
            continue
        if not depth:
            out.append(ch)
    return ''.join(out).replace('::::', '::')

def category(name):
    if re.search(r'serde_json::de|Deserializ|deserialize|Visitor|MapAccess|SeqAccess', name): return 'serde: reading (Deserialize)'
    if re.search(r'serde_wasm_bindgen|serde_json::ser|serde_json::value::ser|Serializ|serialize', name): return 'serde: writing (Serialize)'
    if re.search(r'serde', name): return 'serde: other'
    if re.search(r'core::slice::sort|sort::|driftsort|smallsort', name): return 'std: sorting'
    if re.search(r'btree', name): return 'std: BTreeMap/BTreeSet'
    if re.search(r'fmt|flt2dec|Display|Debug|zmij|itoa|ryu', name): return 'std: formatting'
    if re.search(r'dlmalloc|__rust|compiler_builtins|std::|panic', name): return 'std: alloc, panic, runtime'
    if re.search(r'wasm_bindgen|js_sys|externref|shim|__wbg|__wbindgen', name): return 'wasm-bindgen glue'
    m = re.search(r'ctxkit_core::(\w+)', name)
    if m: return 'ctxkit-core::' + m.group(1)
    if 'ctxkit_wasm' in name: return 'ctxkit-wasm'
    if re.match(r'<?&?(mut )?(core|alloc)', name): return 'std: generic (iterators, Vec, String)'
    return 'other'

def main():
    path = sys.argv[1]
    imports, bodies, names, data = parse(path)
    groups = collections.defaultdict(list)
    for i, body in enumerate(bodies):
        groups[category(names.get(i + imports, '?'))].append(body)
    total_raw = sum(map(len, bodies)) + len(data)
    print(f'{"category":42} {"raw":>9} {"gz":>8}')
    rows = []
    for cat, bs in groups.items():
        blob = b''.join(bs)
        rows.append((len(gzip.compress(blob, 9)), len(blob), cat, len(bs)))
    rows.append((len(gzip.compress(data, 9)), len(data), 'data (strings, tables)', 0))
    for gz, raw, cat, n in sorted(rows, reverse=True):
        print(f'{cat:42} {raw:9,} {gz:8,}')
    print(f'{"sum":42} {total_raw:9,} {sum(r[0] for r in rows):8,}')

main()
