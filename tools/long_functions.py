#!/usr/bin/python3
"""Lists the functions of core/ and server/ longer than a screen: C and C++,
and the page's JavaScript (server/web/*.js).

A C function is read as the tree is formatted (clang-format, .clang-format):
its body opens with a "{" alone at the start of a line and closes with the
next "}" at the start of a line; its length counts from the first line of
its signature (the lines above the "{" back to a blank line, a comment's
end or a line ending in ";" or "}") to its closing "}".

A JavaScript function is read as the page is written (two spaces a level):
a top-level one starts at a line beginning "function name(" (after
"export", "default", "async"), a method at a line of a class body indented
two spaces, "name(...) {" (after "static", "async", "get", "set"); it
closes at the next line beginning "}" at the same indent ("}" for a
function, "  }" for a method), or on its first line when that line closes
every brace it opens.  Its length counts from that first line to its
closing "}".  A function held in a top-level const (or let, var; after
"export") is read too: "const name = (...) => {", with "async" or a single
parameter without parentheses, the parameters on any number of lines, and
"const name = function (...) {"; with a body in braces it closes as a
top-level function does; with an expression for its body, at the last line
of its statement (its continuation lines are indented, or begin with a
closing bracket).

    tools/long_functions.py [--max N] [FOLDER...]   (default: 80, core
                                                    server); exit 1 when
                                                    one is longer
"""
import argparse
import os
import re
import sys

SOURCE = re.compile(r"\.(c|cpp|inc|js)$")
# a name before its "(", or a template's SFX(name) (core/*_impl.inc)
NAME = re.compile(r"SFX\((\w+)\)\s*\(|([A-Za-z_]\w*)\s*\(")


# a top-level function, a class, a method of a class body (JavaScript)
JS_FUNCTION = re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?"
                         r"function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(")
JS_CLASS = re.compile(r"(?:export\s+)?(?:default\s+)?class\b.*\{$")
JS_METHOD = re.compile(r"  (?:static\s+)?(?:async\s+)?(?:[gs]et\s+)?\*?"
                       r"(#?[A-Za-z_$][\w$]*)\s*\(.*\)\s*\{$")
JS_KEYWORDS = {"if", "for", "while", "switch", "catch", "with", "function"}
# a top-level const holding a function: its name, and what follows the "="
JS_CONST = re.compile(r"(?:export\s+)?(?:const|let|var)\s+"
                      r"([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?=[(\w$])")
JS_ARROW_HEAD = re.compile(r"function\b[^(]*|[A-Za-z_$][\w$]*\s*=>|\(")
# the most lines an arrow's parameters take before its "=>"
JS_PARAMS_LINES = 40


def js_arrow(lines, i, start):
    """Whether the text of line i from column start on is a function (an
    arrow or a function expression), and whether its body is in braces:
    (is_function, braces)."""
    text = "\n".join(lines[i:i + JS_PARAMS_LINES])[start:]
    m = JS_ARROW_HEAD.match(text)
    if not m:
        return False, False
    if m.group(0).startswith("function"):
        return True, True
    at = m.end()
    if m.group(0) == "(":  # the parameters, to their closing parenthesis
        depth = 1
        while at < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[at], 0)
            at += 1
        rest = text[at:].lstrip()
        if not rest.startswith("=>"):
            return False, False  # a value in parentheses, not a function
        at = len(text) - len(rest) + 2
    return True, text[at:].lstrip().startswith("{")


def js_expression_end(lines, i):
    """The last line of the statement starting on line i: the lines after
    it that are indented or begin with a closing bracket continue it."""
    j = i
    while j + 1 < len(lines) and lines[j + 1].strip() and \
            lines[j + 1][0] in " \t)]}":
        j += 1
    return j


def js_end(lines, i, indent):
    """The line closing the function that starts on line i: i itself when
    it opens a brace and closes every brace it opens, else the next line
    starting with indent and "}"."""
    if "{" in lines[i] and lines[i].count("{") <= lines[i].count("}"):
        return i
    close = indent + "}"
    return next((j for j in range(i + 1, len(lines))
                 if lines[j].startswith(close)), len(lines) - 1)


def js_functions(lines):
    """(name, first line, length) of each top-level function and method."""
    found, in_class = [], False
    for i, line in enumerate(lines):
        if line.startswith("}"):
            in_class = False
        m = JS_FUNCTION.match(line)
        if m:
            end = js_end(lines, i, "")
            found.append((m.group(1), i + 1, end - i + 1))
            continue
        m = JS_CONST.match(line)
        if m:
            is_function, braces = js_arrow(lines, i, m.end())
            if is_function:
                end = js_end(lines, i, "") if braces \
                    else js_expression_end(lines, i)
                found.append((m.group(1), i + 1, end - i + 1))
            continue
        if JS_CLASS.match(line):
            in_class = True
            continue
        m = JS_METHOD.match(line) if in_class else None
        if m and m.group(1) not in JS_KEYWORDS:
            end = js_end(lines, i, "  ")
            found.append((m.group(1), i + 1, end - i + 1))
    return found


def functions(path):
    """(name, first line, length) of each function of path."""
    lines = open(path, encoding="utf-8").read().splitlines()
    if path.endswith(".js"):
        return js_functions(lines)
    found = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        start = i
        while start > 0 and lines[start - 1].strip() and \
                not lines[start - 1].rstrip().endswith((";", "}", "*/")) and \
                not lines[start - 1].startswith(("#", "//")):
            start -= 1
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].startswith("}")), len(lines) - 1)
        signature = " ".join(lines[start:i])
        if "=" in signature.split("(")[0]:
            continue  # an initialiser, not a function
        m = NAME.search(signature)
        if m:
            found.append((m.group(1) or m.group(2), start + 1,
                          end - start + 1))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("folders", nargs="*", default=["core", "server"])
    args = parser.parse_args()
    top = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    long, count = [], 0
    for folder in args.folders:
        for base, _dirs, files in os.walk(os.path.join(top, folder)):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                path = os.path.join(base, name)
                for fn, first, length in functions(path):
                    count += 1
                    if length > args.max:
                        long.append((length, os.path.relpath(path, top),
                                     first, fn))
    for length, path, first, fn in sorted(long, reverse=True):
        print(f"{path}:{first}: {fn} is {length} lines, more than "
              f"{args.max}")
    print(f"functions: {count} read in {' '.join(args.folders)}, "
          f"{len(long)} longer than {args.max} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
