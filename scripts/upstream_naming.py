#!/usr/bin/env python3
"""Name the Python original consistently as "upstream Magpie" in comments and docs (issue 31).

In this project's sources "Magpie" (capitalised) means the Python project AMD-AGI/Magpie, which
reads as this project's own name ("Magpie's rule", "as Magpie does"). This script rewrites such
mentions to "upstream Magpie" where they are prose for developers:

  - C/C++ comments (`//`, `/* */`) in src/, include/, tests/, bench/ (.h .hpp .cpp .inc .cu .hip .cc)
  - Python / shell / CMake / YAML comments (`#` to end of line, outside string literals)
  - Markdown prose (docs/, *.md), outside code spans and fenced code blocks

It leaves alone everything a user or another program sees or matches on: string literals in code
(help texts, log and error messages, schema descriptions, report keys), Markdown code, URLs and
repository names (AMD-AGI/Magpie, github.com/...), identifiers (MagpieFoo, MAGPIE_*), the
lowercase name of this tool, and mentions that are already qualified ("upstream Magpie",
"Python Magpie", "the original Magpie", "Magpie (Python)"). skills/magpie/reference.md is
generated and skipped.

Usage: scripts/upstream_naming.py [--write] [paths...]   (default: dry run over the tree, printing
a unified diff and a count; --write rewrites the files in place)
"""
import argparse
import difflib
import os
import re
import sys

CODE_EXT = (".h", ".hpp", ".cpp", ".cc", ".inc", ".cu", ".hip", ".cuh")
HASH_EXT = (".py", ".sh", ".cmake", ".yml", ".yaml", ".toml", ".txt")
DOC_EXT = (".md",)
SKIP_DIRS = {".git", "build", "build-sanitize", "third_party", "node_modules", "__pycache__"}
SKIP_FILES = {os.path.join("skills", "magpie", "reference.md")}

QUALIFIED_BEFORE = re.compile(r"(upstream|Upstream|Python|python|original|AMD-AGI)\s*$")
MENTION = re.compile(r"(?<![\w/.\-`])Magpie(?![\w/\-`])")


def rewrite_prose(text):
    """Rewrite the mentions in a piece of prose (no code)."""
    out = []
    last = 0
    for m in MENTION.finditer(text):
        before = text[max(0, m.start() - 24):m.start()]
        after = text[m.end():m.end() + 12]
        if QUALIFIED_BEFORE.search(before) or re.match(r"\s*\((Python|upstream)", after):
            continue
        # "the Magpie ..." -> "upstream Magpie ..." (drop the article), sentence start capitalised
        start = m.start()
        art = re.search(r"(\b[Tt]he )$", text[last:start])
        if art:
            start -= len(art.group(1))
        prev = text[:start].rstrip(" \t")
        sentence_start = (not prev or prev[-1] in ".!?\n#*|" or prev.endswith(("//", "/*", "#"))
                          or (art is not None and art.group(1)[0] == "T"))
        out.append(text[last:start])
        out.append(("Upstream" if sentence_start else "upstream") + " Magpie")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def rewrite_c_like(text):
    """Rewrite only inside // and /* */ comments of C-family source."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(rewrite_prose(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(rewrite_prose(text[i:j]))
            i = j
        elif text.startswith('R"', i) and re.match(r'R"([^(\s]*)\(', text[i:]):
            d = re.match(r'R"([^(\s]*)\(', text[i:]).group(1)
            end = ")" + d + '"'
            j = text.find(end, i + 2)
            j = n if j < 0 else j + len(end)
            out.append(text[i:j])
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def rewrite_hash(text):
    """Rewrite `#` comments (outside quotes) line by line; shebangs and strings are kept."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("#!"):
            continue
        q = None
        for j, c in enumerate(line):
            if q:
                if c == "\\":
                    continue
                if c == q:
                    q = None
            elif c in "\"'":
                q = c
            elif c == "#":
                lines[k] = line[:j] + rewrite_prose(line[j:])
                break
    return "\n".join(lines)


def rewrite_markdown(text):
    """Rewrite Markdown prose; fenced blocks, inline code spans and link targets are kept."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        parts = re.split(r"(`[^`]*`|\]\([^)]*\)|https?://\S+)", line)
        out.append("".join(p if k % 2 else rewrite_prose(p) for k, p in enumerate(parts)))
    return "\n".join(out)


def rewrite(path, text):
    if path.endswith(CODE_EXT):
        return rewrite_c_like(text)
    if path.endswith(DOC_EXT):
        return rewrite_markdown(text)
    if path.endswith(HASH_EXT) or os.path.basename(path) == "CMakeLists.txt":
        return rewrite_hash(text)
    return text


def walk(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for f in sorted(files):
                path = os.path.normpath(os.path.join(root, f))
                if path in SKIP_FILES:
                    continue
                if f.endswith(CODE_EXT + HASH_EXT + DOC_EXT) or f == "CMakeLists.txt":
                    yield path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the files in place")
    ap.add_argument("paths", nargs="*", default=["src", "include", "tests", "bench", "docs", "python",
                                                   "scripts", "examples", "README.md", "DEVELOPERS.md"])
    args = ap.parse_args()
    changed = mentions = 0
    for path in walk([p for p in args.paths if os.path.exists(p)]):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        new = rewrite(path, text)
        if new == text:
            continue
        changed += 1
        n = len(re.findall(r"[Uu]pstream Magpie", new)) - len(re.findall(r"[Uu]pstream Magpie", text))
        mentions += n
        if args.write:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        else:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       "a/" + path, "b/" + path, n=0))
    print(f"{'rewrote' if args.write else 'would rewrite'} {mentions} mention(s) in {changed} file(s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
