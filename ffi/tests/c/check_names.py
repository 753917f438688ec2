#!/usr/bin/env python3
"""Every public name that `#include <floe.h>` brings into a C program begins with floe_ or FLOE_.

Usage: check_names.py <cc> <include dir>

Macros are what the compiler's preprocessor defines after including floe.h, less what
<stddef.h> and <stdint.h> define (`cc -E -dM`), so none can hide. Declarations (functions,
typedefs, struct, union and enum tags, enum constants, variables) are read from floe.h and the
headers it includes from the same folder (floe_types.h), with comments and preprocessor lines
removed, by a scan of the file-scope tokens. Exits 1 naming every unprefixed name.
"""
import os
import re
import subprocess
import sys

PREFIXES = ("floe_", "FLOE_")
# Keywords and standard type names that appear at file scope in a declaration.
KNOWN = {
    "typedef", "struct", "union", "enum", "const", "volatile", "extern", "static", "inline",
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
    "uint64_t", "uintptr_t", "intptr_t",
}


def macros(cc, include):
    def defined(source, flags):
        out = subprocess.run([cc, "-E", "-dM", "-x", "c", *flags, "-"], input=source, text=True,
                             capture_output=True, check=True).stdout
        return {re.match(r"#define (\w+)", line).group(1) for line in out.splitlines()
                if line.startswith("#define ")}
    system = defined("#include <stddef.h>\n#include <stdint.h>\n", [])
    ours = defined("#include <floe.h>\n", ["-I", include])
    return ours - system


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # What a C compiler skips: the C++ guards (`extern "C" {` and its `}`).
    text = re.sub(r"^[ \t]*#ifdef __cplusplus\b.*?^[ \t]*#endif[^\n]*", " ", text, flags=re.S | re.M)
    # Preprocessor lines, with their continuations.
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def declared(text):
    """Names declared at file scope: tags, typedef names, functions, enum constants, variables."""
    tokens = re.findall(r"[A-Za-z_]\w*|[{}()\[\];,=*]", strip(text))
    names = set()
    depth = 0      # braces
    parens = 0     # parentheses at file scope (parameter lists, function-pointer declarators)
    statement = []  # file-scope tokens of the current declaration
    enum_body = False
    expect_constant = False
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        if tok == "{":
            depth += 1
            if depth == 1:
                enum_body = "enum" in statement
                expect_constant = enum_body
            continue
        if tok == "}":
            depth -= 1
            enum_body = enum_body and depth > 0
            continue
        if depth > 0:
            if enum_body and depth == 1:
                if tok == ",":
                    expect_constant = True
                elif expect_constant and re.match(r"[A-Za-z_]", tok):
                    names.add(tok)
                    expect_constant = False
            continue
        if tok == "(":
            parens += 1
        elif tok == ")":
            parens -= 1
        if prev in ("struct", "union", "enum") and re.match(r"[A-Za-z_]", tok):
            names.add(tok)
        if tok == "(" and parens == 1 and re.match(r"[A-Za-z_]", prev) and prev not in KNOWN:
            names.add(prev)  # a function (or the declarator of a function pointer)
        if parens == 1 and prev == "*" and tokens[i - 2] == "(" and re.match(r"[A-Za-z_]", tok):
            names.add(tok)  # `typedef void (*name)(...)`
        if tok in (";", ","):
            # The declarator ending here: the last identifier at file scope outside parentheses.
            outside = [t for t in statement if re.match(r"[A-Za-z_]", t) and t not in KNOWN]
            if parens == 0 and outside and statement[-1] != ")":
                names.add(outside[-1])
            if tok == ";":
                statement = []
            continue
        if parens == 0 or tok in ("(", ")"):
            statement.append(tok)
        else:
            statement.append("(")  # keep parameter names out of the declarators
    return names


def main():
    cc, include = sys.argv[1], sys.argv[2]
    headers, queue = [], ["floe.h"]
    while queue:
        name = queue.pop()
        if name in headers:
            continue
        headers.append(name)
        text = open(os.path.join(include, name), encoding="utf-8").read()
        queue += [h for h in re.findall(r'#include\s+"([^"]+)"', text)
                  if os.path.exists(os.path.join(include, h))]
    names = set()
    for h in headers:
        names |= declared(open(os.path.join(include, h), encoding="utf-8").read())
    found_macros = macros(cc, include)
    # The scan must see the header's names, or it checks nothing.
    for must in ("floe_pool", "floe_engine_new", "floe_progress_fn", "floe_verdict", "floe_status",
                 "floe_verdict_detail"):
        assert must in names, f"the scan of {headers} missed {must}: {sorted(names)}"
    for must in ("FLOE_STATUS_OK", "FLOE_H", "FLOE_PLAN_JSON"):
        assert must in found_macros, f"the preprocessor did not report {must}"
    bad = sorted(n for n in names | found_macros if not n.startswith(PREFIXES))
    if bad:
        print(f"names without the floe_/FLOE_ prefix in {', '.join(headers)}: {', '.join(bad)}",
              file=sys.stderr)
        return 1
    print(f"check_names: {len(names)} declarations and {len(found_macros)} macros of "
          f"{', '.join(headers)}, all prefixed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
