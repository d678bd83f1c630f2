#!/usr/bin/python3
"""tools/check_layout.py's checks of circles, on small trees written here:
the page's imports (a cycle is found and named, a ground module importing
above the ground is named, an import of no module is named, and a page
whose imports point down passes), the calls between C files read from their
objects with nm (compiled here with cc), and includes round a circle; and
tools/long_functions.py's reading of C functions and of the page's (top
level, methods, and functions held in a const).

    python3 tests/layout/test_check_layout.py
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import check_layout  # noqa: E402
import long_functions  # noqa: E402


def page(modules):
    """A repository holding server/web/ with modules {name: [imports]};
    each import written as the page writes them."""
    top = tempfile.mkdtemp()
    os.makedirs(os.path.join(top, "server", "web"))
    for name, imports in modules.items():
        with open(os.path.join(top, "server", "web", name), "w") as f:
            for k, target in enumerate(imports):
                f.write(f'import {{ f{k} }} from "./{target}";\n')
            f.write("export const x = 1;\n")
    return check_layout.web_violations(top)


def expect(found, *parts):
    for part in parts:
        assert any(part in line for line in found), (part, found)


def main():
    # views.js → compare.js → request.js → views.js, and main.js above them
    found = page({"main.js": ["views.js"], "views.js": ["compare.js", "base.js"],
                  "compare.js": ["request.js"], "request.js": ["views.js"],
                  "base.js": []})
    expect(found, "import cycle compare.js → request.js → views.js → "
           "compare.js", "3 modules")
    assert len(found) == 1, found
    # a module that imports itself is a cycle too
    expect(page({"a.js": ["a.js"]}), "import cycle a.js → a.js")
    # the ground imports only the ground (fields.js, generated, is ground)
    found = page({"base.js": ["form.js", "fields.js"], "form.js": ["base.js"]})
    expect(found, "server/web/base.js: a ground module imports form.js",
           "import cycle base.js → form.js → base.js")
    expect(page({"views.js": ["gone.js"]}), "imports ./gone.js, which is not")
    # imports pointing down only
    assert page({"main.js": ["views.js", "state.js"], "views.js": ["state.js"],
                 "state.js": ["fields.js"], "hooks.js": []}) == []
    # the dynamic and re-exporting forms are read as imports too
    top = tempfile.mkdtemp()
    os.makedirs(os.path.join(top, "server", "web"))
    for name, text in {"a.js": 'export { x } from "./b.js";\n',
                       "b.js": 'const m = import("./a.js");\n'}.items():
        with open(os.path.join(top, "server", "web", name), "w") as f:
            f.write(text)
    expect(check_layout.web_violations(top), "import cycle a.js → b.js → a.js")
    calls()
    rooms()
    lengths()
    functions()
    page_functions()
    page_const_functions()
    print("check_layout: the page's imports (6 cases), calls and includes "
          "(3 cases), rooms (4 cases), lengths (1 case), long functions "
          "(3 cases) pass")


def tree(files):
    """A repository of {path: text}; each .c compiled into build/."""
    top = tempfile.mkdtemp()
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(top, path)), exist_ok=True)
        with open(os.path.join(top, path), "w") as f:
            f.write(text)
        if path.endswith(".c"):
            obj = os.path.join(top, "build", path[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run(["cc", "-c", "-I", top, os.path.join(top, path),
                            "-o", obj], check=True)
    return top


def calls():
    # lanes.c hands back to answer.c, which starts lanes.c: a circle
    top = tree({"server/http/answer.c": "int lanes_start(void);\n"
                "int answer_queue(void) { return 1; }\n"
                "int answer_access(void) { return lanes_start(); }\n",
                "server/http/lanes.c": "int answer_queue(void);\n"
                "int lanes_start(void) { return answer_queue(); }\n",
                "server/http/daemon.c": "int answer_access(void);\n"
                "int http_start(void) { return answer_access(); }\n"})
    unbuilt, found = check_layout.call_violations(top, os.path.join(top, "build"))
    assert unbuilt == [], unbuilt
    assert found == ["call circle server/http/answer.c → server/http/lanes.c "
                     "→ server/http/answer.c (answer.c calls lanes_start, "
                     "lanes.c calls answer_queue)"], found
    # the queueing below both: no circle
    top = tree({"server/http/answer.c": "int lanes_start(void);\n"
                "int answer_access(void) { return lanes_start(); }\n",
                "server/http/lanes.c": "int reply_queue(void);\n"
                "int lanes_start(void) { return reply_queue(); }\n",
                "server/http/reply_queue.c": "int reply_queue(void) "
                "{ return 1; }\n"})
    assert check_layout.call_violations(top, os.path.join(top, "build")) == ([], [])
    # an object not built is said as such, not read as a circle
    os.remove(os.path.join(top, "build", "server", "http", "lanes.o"))
    assert check_layout.call_violations(top, os.path.join(top, "build")) == (
        [f"server/http/lanes.c: its object is not in {top}/build/"], [])
    # two headers that include each other
    top = tree({"server/http/daemon.h": '#include "server/http/exchange.h"\n',
                "server/http/exchange.h": '#include "server/http/daemon.h"\n'})
    assert check_layout.include_violations(top) == [
        "include circle server/http/daemon.h → server/http/exchange.h → "
        "server/http/daemon.h"], check_layout.include_violations(top)


def rooms_doc(order):
    return ("# Architecture\n\n## The rooms\n\n| room | what |\n| --- | --- |\n"
            + "".join(f"| `{room}{'' if room.endswith('.c') else '/'}` | x |\n"
                      for room in order) + "\n## The page\n\n| `main.js` | x |\n")


def rooms():
    order = check_layout.ROOM_ORDER
    # the request model reads no JSON type, and includes no codec above it
    top = tree({"docs/architecture.md": rooms_doc(order),
                "server/json/parse_json.h": "",
                "server/request/rules.c": "#include <jansson.h>\n"
                '#include "server/json/parse_json.h"\n'})
    found = check_layout.violations(top)
    assert found == [
        "server/request/rules.c:1: server/request includes <jansson.h>",
        "server/request/rules.c:2: server/request includes "
        "server/json/parse_json.h (server/json), which is not below it"], found
    assert check_layout.room_violations(top) == []
    # the docs' table of rooms in another order than server/rooms.mk's
    swapped = list(order)
    i, j = swapped.index("server/json"), swapped.index("server/request")
    swapped[i], swapped[j] = swapped[j], swapped[i]
    top = tree({"docs/architecture.md": rooms_doc(swapped)})
    found = check_layout.room_violations(top)
    assert len(found) == 1 and found[0].startswith(
        "docs/architecture.md: its table of rooms lists "), found
    # a chain of rooms in the prose: in the rooms' order, or named
    doc = rooms_doc(order).replace(
        "## The rooms", "`core ← server/request ← server/json` one way, "
        "`core ← server/json ← server/request` not, nor "
        "`core ← server/nowhere`\n\n## The rooms")
    found = check_layout.room_violations(tree({"docs/architecture.md": doc}))
    assert len(found) == 2 and all(
        "is not in server/rooms.mk's order of rooms" in f for f in found) and \
        "server/nowhere" in found[1], found


def lengths():
    # the core's templates count as the server's sources do: 650 lines
    top = tree({"core/pass_long.inc": "x;\n" * 651,
                "core/pass_fits.inc": "x;\n" * 650,
                "server/json/long.c": "/* x */\n" * 651})
    found, read = check_layout.too_long(top)
    assert found == ["core/pass_long.inc: 651 lines, more than 650",
                     "server/json/long.c: 651 lines, more than 650"], found
    assert read == 3, read


def functions():
    # tools/long_functions.py (make test-layout): a template's SFX(name) of
    # 81 lines, signature to closing brace, is named; one of 80 is not
    top = tree({"core/pass.inc":
                "static void SFX(long_task)(void *ctx,\n"
                "                           size_t i)\n{\n"
                + "    x;\n" * 77 + "}\n\n"
                "static int fits(void)\n{\n" + "    x;\n" * 77 + "}\n"})
    found = long_functions.functions(os.path.join(top, "core", "pass.inc"))
    assert found == [("long_task", 1, 81), ("fits", 83, 80)], found


def long_functions_fail(top):
    """What tools/long_functions.py prints for top's server/, which must
    fail (exit status 1)."""
    run = subprocess.run([sys.executable, long_functions.__file__,
                          os.path.join(top, "server")],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stdout
    return run.stdout


def page_functions():
    # the page's JavaScript too: a top-level function of 81 lines, first
    # line to its closing "}", is named, one of 80 is not; so is a method of
    # 81 lines (its "}" two spaces in), not one of 80; a one-line function
    # is one line, and an inner "}" (a block, an object) ends nothing
    body = "  const o = {\n    a: 1,\n  };\n" + "  x();\n" * 73
    top = tree({"server/web/page.js":
                "export async function longStep(a,\n"
                "                               b) {\n" + body
                + "  if (a) {\n  }\n}\n\n"
                "function fits() {\n" + body + "  y();\n  z();\n}\n"
                "export const f = () => 1;\n"
                "function one() { return 1; }\n\n"
                "export class View {\n"
                "  static build(x) {\n" + "  " + body.replace("\n  ", "\n    ")
                + "    if (x) {\n    }\n    w();\n  }\n\n"
                "  get size() {\n" + "    x();\n" * 78 + "  }\n"
                "}\n"})
    path = os.path.join(top, "server", "web", "page.js")
    found = long_functions.functions(path)
    assert found == [("longStep", 1, 81), ("fits", 83, 80), ("f", 163, 1),
                     ("one", 164, 1), ("build", 167, 81), ("size", 249, 80)], \
        found
    out = long_functions_fail(top)
    assert "page.js:1: longStep is 81 lines" in out, out
    assert "page.js:167: build is 81 lines" in out, out
    assert "fits" not in out and "size" not in out, out


def page_const_functions():
    # a function held in a top-level const: an arrow whose body is in
    # braces, of 81 lines, first line to its closing "}" (an inner "}" ending
    # nothing), is named, one of 80 is not; so are an async one whose
    # parameters take two lines and one with a single bare parameter; an
    # expression body ends with its statement (its indented lines and a
    # closing bracket at the start of a line); a function expression counts
    # as a function; a value in parentheses, or not a function, is no
    # function
    body = "  const o = {\n    a: 1,\n  };\n" + "  x();\n" * 76
    top = tree({"server/web/page.js":
                "export const longArrow = (a, b) => {\n" + body + "};\n"
                "const fits = async (a,\n  b) => {\n" + body[:-14] + "};\n"
                "let bare = a => {\n" + body[:-14] + "  y();\n}\n"
                "export const t = (id) =>\n  nodes(id)\n    .join(\"\");\n"
                "const later = () => new Promise((resolve) => {\n"
                "  setTimeout(resolve, 0);\n});\n"
                "const old = function (a) {\n" + "  x();\n" * 80 + "};\n"
                "const sum = (1 + 2) * 3;\n"
                "const cell = { a: (b) => b };\n"})
    path = os.path.join(top, "server", "web", "page.js")
    found = long_functions.functions(path)
    assert found == [("longArrow", 1, 81), ("fits", 82, 80),
                     ("bare", 162, 80), ("t", 242, 3), ("later", 245, 3),
                     ("old", 248, 82)], found
    out = long_functions_fail(top)
    assert "page.js:1: longArrow is 81 lines" in out, out
    assert "page.js:248: old is 82 lines" in out, out
    assert "fits" not in out and "bare" not in out, out


if __name__ == "__main__":
    main()
