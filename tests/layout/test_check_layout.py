#!/usr/bin/python3
"""tools/check_layout.py's check of the page's imports, on small pages
written here: a cycle is found and named, a ground module importing above
the ground is named, an import of no module is named, and a page whose
imports point down passes.

    python3 tests/layout/test_check_layout.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import check_layout  # noqa: E402


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
    print("check_layout: the page's import check: 6 cases pass")


if __name__ == "__main__":
    main()
