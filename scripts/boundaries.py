#!/usr/bin/env python3
"""Module-boundary measurements and the CI check behind scripts/check_boundaries.sh (issue 31).

  boundaries.py measure [--src src]     print the figures the issue tracks:
                                        headers naming json, public declarations that return or
                                        take JSON, `== "word"` comparisons, longest functions
  boundaries.py check [--src src] [--allowlist FILE] [--max-mode-words N]
                                        exit 1 when a public header outside codec/printer/schema
                                        files declares a function returning or taking JSON that
                                        the allowlist does not name, when the allowlist names
                                        one that is gone (so it only shrinks), or when the
                                        comparisons against mode words (scripts/mode_words.txt)
                                        outside codec files exceed N

Heuristic and grep-like on purpose: comments and string literals are blanked, a declaration is a
statement (up to `;` or `{`) at any depth that has a parenthesised parameter list, and "JSON" is
the type name `json` / `nlohmann::json` / `ordered_json` (with any qualifiers or template
around it, e.g. `status_or<json>`, `const json&`, `std::vector<json>`). Not counted: an enum's
one-line nlohmann hook `inline void to_json(json& j, E e)` (it writes the codec's word).
"""
import argparse
import os
import re
import sys

JSON_TYPE = re.compile(r"(?<![\w:])(?:nlohmann::)?(?:ordered_)?json\b(?!\s*=)")
# A file is an edge file (codec, printer, schema, the JSON adapter itself, a wire protocol whose
# messages are JSON: the MCP server's JSON-RPC, the Ray Jobs REST client) by its name.
EDGE_NAME = re.compile(r"(codec|printer|schema|json|report_writer|protocol)", re.I)
MODE_CMP = re.compile(r'[!=]=\s*"([A-Za-z][A-Za-z0-9_-]*)"|"([A-Za-z][A-Za-z0-9_-]*)"\s*[!=]=')
MODE_WORDS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mode_words.txt")


def mode_words(path=MODE_WORDS_FILE):
    """The mode/state words of scripts/mode_words.txt."""
    words = set()
    for raw in open(path, encoding="utf-8"):
        w = raw.split("#", 1)[0].strip()
        if w:
            words.add(w)
    return words


def blank_comments_and_strings(text, keep_strings=False):
    """Replace comments (and string/char literal contents unless keep_strings) by spaces, keeping
    newlines so line numbers stay right."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            body = text[i:j]
            out.append(body if keep_strings else '""' + re.sub(r"[^\n]", " ", body[2:]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            body = text[i:j]
            out.append(body if keep_strings else c + " " * (len(body) - 2) + c if len(body) >= 2 else body)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(src, exts):
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith(exts):
                yield os.path.join(root, f)


def is_edge(path):
    return bool(EDGE_NAME.search(os.path.basename(path)))


def json_declarations(path):
    """(line, name, signature) of each function declared in the header whose return type or
    parameters name JSON."""
    text = blank_comments_and_strings(open(path, encoding="utf-8").read())
    found = []
    start = 0
    for m in re.finditer(r"[;{}]", text):
        stmt = text[start:m.start()]
        stmt_start = start
        start = m.end()
        if "(" not in stmt or not JSON_TYPE.search(stmt):
            continue
        s = stmt.strip()
        if re.match(r"(using|typedef|#|return\b|static_assert)", s) or s.startswith(("if", "for", "while")):
            continue
        # name: the identifier before the first '(' that is not inside a template argument list
        head = s[: s.index("(")]
        if "=" in head and "operator" not in head:  # a variable initialised by a call
            continue
        name_m = re.search(r"(operator\s*\S+|~?\w+)\s*$", head)
        if not name_m:
            continue
        name = name_m.group(1)
        if name in ("MAGPIE_SUBCOMMAND", "decltype", "sizeof", "alignof", "noexcept"):
            continue
        ret = head[: name_m.start()]
        params = s[s.index("("):]
        if not (JSON_TYPE.search(ret) or JSON_TYPE.search(params)):
            continue
        if not ret.strip() and not name.startswith("operator") and name[0] != "~":
            continue  # a call expression, not a declaration
        if name == "to_json" and re.match(r"inline\s+void\s+to_json\s*\(\s*json\s*&\s*\w+\s*,\s*\w+\s+\w+\s*\)$", s):
            continue  # an enum's nlohmann hook beside its codec's name function (writes the word)
        line = text.count("\n", 0, stmt_start + len(stmt) - len(stmt.lstrip())) + 1
        found.append((line, name, " ".join(s.split())))
    return found


def public_json_decls(src):
    rows = []
    for path in sources(src, (".h", ".hpp")):
        if is_edge(path):
            continue
        for line, name, sig in json_declarations(path):
            rows.append((os.path.relpath(path, os.path.dirname(src.rstrip("/")) or "."), line, name, sig))
    return rows


def mode_comparisons(src, include_edge=True):
    """(path, line, word) of each `== "word"` / `!= "word"` comparison in src."""
    rows = []
    for path in sources(src, (".h", ".cpp", ".inc")):
        if not include_edge and is_edge(path):
            continue
        text = blank_comments_and_strings(open(path, encoding="utf-8").read(), keep_strings=True)
        for m in MODE_CMP.finditer(text):
            rows.append((path, text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)))
    return rows


FUNC_HEAD = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(->\s*[^{;]+)?(override\s*)?(final\s*)?\{$")


def function_lengths(src):
    """(lines, path, line, name) of each function body in .cpp/.inc files, by brace matching
    after a `) {` head at namespace depth (lambdas are part of their function)."""
    out = []
    for path in sources(src, (".cpp", ".inc")):
        text = blank_comments_and_strings(open(path, encoding="utf-8").read())
        lines = text.split("\n")
        depth = 0
        ns_depth = 0
        stack = []  # depth at which each namespace/struct opened
        func = None
        for no, raw in enumerate(lines, 1):
            line = raw.rstrip()
            for k, ch in enumerate(line):
                if ch == "{":
                    before = line[: k + 1].strip()
                    if func is None:
                        prefix = before
                        # join with the previous line when the head wraps
                        if not re.search(r"\)", prefix) and no >= 2:
                            prefix = lines[no - 2].strip() + " " + prefix
                        if re.match(r"(namespace|struct|class|enum|union|extern)\b", before) or "namespace" in before:
                            stack.append(depth)
                        elif FUNC_HEAD.search(prefix) or re.search(r"\)\s*(const)?\s*(->.*)?\{$", prefix):
                            nm = re.findall(r"([~\w:]+)\s*\(", prefix)
                            func = (no, nm[0] if nm else "?", depth)
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if func is not None and depth == func[2]:
                        out.append((no - func[0] + 1, path, func[0], func[1]))
                        func = None
                    elif stack and depth == stack[-1]:
                        stack.pop()
    out.sort(reverse=True)
    return out


def measure(args):
    src = args.src
    headers = list(sources(src, (".h", ".hpp")))
    naming = [h for h in headers if re.search(r"\bjson\b", open(h, encoding="utf-8").read())]
    decls = public_json_decls(src)
    returns = sum(1 for d in decls if JSON_TYPE.search(d[3][: d[3].index("(")]))
    status_or = sum(1 for d in decls if re.search(r"status_or<\s*(nlohmann::)?json\s*>", d[3]))
    cmps = mode_comparisons(src)
    cmps_out = [c for c in cmps if not is_edge(c[0])]
    words = mode_words()
    cmps_mode = [c for c in cmps_out if c[2] in words]
    funcs = function_lengths(src)
    print(f"headers: {len(headers)}, naming json: {len(naming)}")
    print(f"public declarations (non-edge headers) returning or taking json: {len(decls)} "
          f"(returning: {returns}, status_or<json>: {status_or}) in {len(set(d[0] for d in decls))} headers")
    print(f'`== "word"` / `!= "word"` comparisons: {len(cmps)} ({len(cmps_out)} outside codec/printer/schema files; '
          f'{len(cmps_mode)} of those against mode words of scripts/mode_words.txt)')
    print(f"functions: {len(funcs)}, over 60 lines: {sum(1 for f in funcs if f[0] > 60)}, "
          f"over 80: {sum(1 for f in funcs if f[0] > 80)}")
    print("longest functions:")
    for n, path, line, name in funcs[: args.top]:
        print(f"  {n:4d}  {path}:{line}  {name}")
    if args.verbose:
        for d in decls:
            print(f"  json decl: {d[0]}:{d[1]} {d[2]}")
    return 0


def check(args):
    allowed = set()
    if os.path.exists(args.allowlist):
        for raw in open(args.allowlist, encoding="utf-8"):
            s = raw.split("#", 1)[0].strip()
            if s:
                allowed.add(s)
    failures = 0
    seen = set()
    for path, line, name, sig in public_json_decls(args.src):
        key = f"{path} {name}"
        seen.add(key)
        if key not in allowed:
            print(f"{path}:{line}: public function `{name}` returns or takes JSON outside a "
                  f"codec/printer/schema file: {sig}")
            failures += 1
    for key in sorted(allowed - seen):
        print(f"{args.allowlist}: `{key}` no longer declares JSON: remove it from the allowlist")
        failures += 1
    words = mode_words()
    cmps = [c for c in mode_comparisons(args.src) if not is_edge(c[0]) and c[2] in words]
    if args.max_mode_words is not None and len(cmps) > args.max_mode_words:
        for path, line, word in cmps:
            print(f'{path}:{line}: == "{word}" (a mode word) outside a codec file')
        print(f'{len(cmps)} comparisons against mode words outside codec files (limit {args.max_mode_words})')
        failures += 1
    if failures:
        print(f"check_boundaries: {failures} problem(s)")
        return 1
    print(f"check_boundaries: ok ({len(allowed)} allowlisted declarations left to convert, "
          f"{len(cmps)} mode-word comparisons)")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--src", default="src")
    m.add_argument("--top", type=int, default=10)
    m.add_argument("-v", "--verbose", action="store_true")
    c = sub.add_parser("check")
    c.add_argument("--src", default="src")
    c.add_argument("--allowlist", default="scripts/boundaries_allowlist.txt")
    c.add_argument("--max-mode-words", type=int, default=None)
    c.add_argument("--print-allowlist", action="store_true",
                   help="print the allowlist that would make the check pass (for a first run)")
    args = p.parse_args()
    if args.cmd == "check" and args.print_allowlist:
        for path, _, name, _ in public_json_decls(args.src):
            print(f"{path} {name}")
        return 0
    return measure(args) if args.cmd == "measure" else check(args)


if __name__ == "__main__":
    sys.exit(main())
