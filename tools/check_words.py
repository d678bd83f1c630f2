#!/usr/bin/python3
"""Checks that every word the page shows comes from its catalogs.

The page's sentences live in server/web/words-en.js (the source: its ids are
the list) and one catalog per other language (words-es.js, words-it.js,
words-tr.js), one `"id": "text",` per line.  This fails when:

  1. a catalog misses an id of words-en.js, or has one words-en.js has not;
  2. a message's placeholders ({name}) differ from the English one's;
  3. a module calls t("id") or nodes("id") with an id no catalog has (an id
     built from a template, t(`lessons.${key}.title`), must start with the
     prefix of some id);
  4. a module holds a user-visible literal: a string with a word in it (two
     or more letters that are not a mathematical name: MATH_NAMES) that is
       - a child of el(tag, attrs, ...children), or given to append(),
         replaceChildren(), prepend(), setStatus(), new ClientError(pointer,
         ...), new Error(...);
       - the value of a text, title, aria-label, placeholder, alt, label,
         hint or note key in an object literal, or of
         setAttribute("aria-label" | "title" | "placeholder", ...);
       - assigned to .textContent, .innerText, .title or .placeholder;
       - or any literal of three words or more (a sentence), wherever it is;
     a template literal's ${…} parts are not words; a line that holds
     `// words-check: <why>`, and the lines between `// words-check: off
     (<why>)` and `// words-check: on` (code the page writes for Python, not
     for a person) are not read;
  5. index.html holds text outside an element that names its message
     (data-i18n), or an aria-label/placeholder/title with words and no
     data-i18n-<attribute>;
  6. a message calls the raw product Q·Kᵀ "scores" (in any language), or
     scales "scores": the lessons disagree on the name (001's `scores` is
     Q·Kᵀ; 000's `scores` and 002's `skor` are already divided by √d_k),
     so the page's own sentences name the raw product Q·Kᵀ and the scaled
     one "scaled scores", and never contradict a lesson.

Each run first proves the rule on two small modules (SELF_TEST_BAD: seven
literals and an unknown id it must refuse; SELF_TEST_GOOD: code it must
pass).

    tools/check_words.py            check (exit 1 on a violation)
    tools/check_words.py --pending  list the modules still pending
"""
import json
import os
import re
import sys
from html.parser import HTMLParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEB = os.path.join(ROOT, "server", "web")
LANGS = ["en", "es", "it", "tr"]

# Modules whose words are not in the catalogs yet: each helper removes its
# own as it converts them.  The list only shrinks.
PENDING = set()
# Not read: the catalogs themselves, and generated data (the lessons'
# numbers; their titles and notes are catalog messages).
NOT_MODULES = {"words-en.js", "words-es.js", "words-it.js", "words-tr.js", "presets.js", "fields.js"}

# Names that are mathematics or code in any language: not words to translate.
MATH_NAMES = {
    "softmax", "exp", "max", "sum", "log", "sqrt", "sin", "cos", "concat", "scores", "scaled_scores",
    "d_k", "d_v", "d_c", "h_kv", "dtype", "float64", "float32", "np", "torch", "tensor", "array",
    "RoPE", "ALiBi", "GQA", "KV", "QKᵀ", "Kᵀ", "PE", "CSV", "SVG", "PNG", "JSON", "npy", "HTML", "HTTP",
    "API", "curl", "NumPy", "PyTorch", "True", "False", "true", "false", "null", "Infinity", "NaN",
    "nn", "state_dict", "past_k", "past_v", "k_cache", "v_cache", "b_q", "b_k", "b_v", "b_o",
    "W_q", "W_k", "W_v", "W_o", "x_pe", "q_rope", "k_rope", "lang",
}
WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿĞğİıŞşÇçÖöÜü][0-9A-Za-zÀ-ÖØ-öø-ÿĞğİıŞşÇçÖöÜü_ᵀ']+")
VISIBLE_KEYS = {"text", "title", "aria-label", "placeholder", "alt", "label", "hint", "note", "aria-description"}
VISIBLE_ATTRS = {"aria-label", "title", "placeholder", "alt"}
# a call's arguments that are words: (first, last) argument index
MANY = 99
VISIBLE_CALLS = {"el": (2, MANY), "append": (0, MANY), "replaceChildren": (0, MANY), "prepend": (0, MANY),
                 "setStatus": (0, 0), "ClientError": (1, 1), "Error": (0, 0), "alert": (0, 0), "confirm": (0, 0)}
COMPARED = re.compile(r"(===|!==|==|!=)\s*$")
VISIBLE_ASSIGN = re.compile(r"\.(textContent|innerText|title|placeholder)\s*=\s*$")
REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}
EXEMPT = "// words-check:"
# Rule 6: a word for scores set equal to the bare product, or scaled.
SCORES_AS_PRODUCT = re.compile(
    r"\b(?:scores?|puntuaci[oó]n(?:es)?|punteggi|punteggio|skor(?:lar)?)"
    r"(?:\s*[÷×]|\s*=\s*Q·?Kᵀ(?!\s*[/÷×]))", re.I)


def catalog(lang):
    """{id: text} of words-LANG.js, in its order."""
    out, path = {}, os.path.join(WEB, f"words-{lang}.js")
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.match(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*("(?:[^"\\]|\\.)*")\s*,?\s*$', line)
        if m:
            k = json.loads(m.group(1))
            if k in out:
                yield_error(f"words-{lang}.js:{n}: {k} twice")
            out[k] = json.loads(m.group(2))
    return out


ERRORS = []


def yield_error(text):
    ERRORS.append(text)


def placeholders(text):
    return sorted(set(re.findall(r"\{(\w+)\}", text)))


def words_in(text):
    """The words of a literal: its letters outside ${…}, math names aside."""
    text = re.sub(r"\$\{[^}]*\}", " ", text)
    return [w for w in WORD.findall(text) if w not in MATH_NAMES and w.strip("'") not in MATH_NAMES]


CSS = re.compile(r"\d(px|ch|em|rem)\b|^[\w-]+:\s*[^ ]+;?$")


def sentence(text):
    """Three words or more, each a whole token between spaces: a sentence, not code."""
    tokens = re.sub(r"\$\{[^}]*\}", " ", text).split()
    plain = [t for t in tokens if words_in(t) and re.fullmatch(r"[(\"“']?[^\W\d_]+[.,;:!?)\"”']*", t)]
    # two of them lower-case words: a sentence ("Qh, Kh, Vh = …" is a lesson's code)
    return len(plain) >= 3 and sum(1 for t in plain if re.match(r"[(\"“']?[^\W\d_A-ZÀ-ÖØ-ÞĞİŞÇÖÜ]{2,}", t)) >= 2


def literals(src):
    """Every string literal of a JS source: (text, line, callee, arg index,
    key before it, code before it on its line), skipping comments and regexes."""
    out, stack, i, n, line = [], [], 0, len(src), 1
    last = ""  # the last significant character before i

    def arg_of():
        return (stack[-1][1], stack[-1][2]) if stack and stack[-1][0] == "(" else (None, None)

    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            line += src.count("\n", i, j)
            i = j + 2
            continue
        if c == "/" and (last in REGEX_BEFORE or re.search(r"\b(return|typeof|case)\s*$", src[max(0, i - 10):i])):
            j, cls = i + 1, False
            while j < n and (src[j] != "/" or cls):
                if src[j] == "\\":
                    j += 1
                elif src[j] == "[":
                    cls = True
                elif src[j] == "]":
                    cls = False
                j += 1
            i, last = j + 1, "/"
            continue
        if c in "\"'`":
            j, start, parts = i + 1, line, []
            while j < n and src[j] != c:
                if src[j] == "\\":
                    j += 1
                elif c == "`" and src.startswith("${", j):
                    depth, j = 1, j + 2
                    while j < n and depth:
                        depth += {"{": 1, "}": -1}.get(src[j], 0)
                        j += 1
                    parts.append("${}")
                    continue
                if src[j] == "\n":
                    line += 1
                parts.append(src[j])
                j += 1
            text = "".join(parts)
            callee, arg = arg_of()
            before = src[src.rfind("\n", 0, i) + 1:i]
            key = None
            if stack and stack[-1][0] == "{":
                m = re.search(r"""["']?([\w-]+)["']?\s*:\s*(?:[^,{}]*\?\s*)?(?:[^,{}]*:\s*)?$""", before)
                key = m.group(1) if m else None
            after = src[j + 1:j + 6].lstrip()
            compared = COMPARED.search(before) or re.match(r"(===|!==|==|!=|\?|in\b)", after)
            out.append((text, start, callee, arg, key, before, stack[-1][3] if stack and stack[-1][0] == "(" else "",
                        bool(compared)))
            i, last = j + 1, c
            continue
        if c in "([{":
            name = ""
            if c == "(":
                m = re.search(r"([\w$]+)\s*$", src[max(0, i - 40):i])
                name = m.group(1) if m else ""
            stack.append([c, name, 0, ""])
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c == "," and stack and stack[-1][0] == "(":
            stack[-1][2] += 1
        if stack and stack[-1][0] == "(" and stack[-1][2] == 0 and c not in "(":
            stack[-1][3] += c  # the first argument's text (setAttribute's name)
        if not c.isspace():
            last = c
        i += 1
    return out


def check_catalogs():
    cats = {lang: catalog(lang) for lang in LANGS}
    en = cats["en"]
    for lang in LANGS[1:]:
        c = cats[lang]
        for k in en:
            if k not in c:
                yield_error(f"words-{lang}.js: misses {k}")
            elif placeholders(c[k]) != placeholders(en[k]):
                yield_error(f"words-{lang}.js: {k} has {placeholders(c[k])}, English has {placeholders(en[k])}")
        for k in c:
            if k not in en:
                yield_error(f"words-{lang}.js: {k} is not an id of words-en.js")
        if list(c) != [k for k in en if k in c]:
            yield_error(f"words-{lang}.js: ids not in words-en.js's order")
    for lang, c in cats.items():
        for k, text in c.items():
            m = SCORES_AS_PRODUCT.search(text)
            if m:
                yield_error(f"words-{lang}.js: {k} writes \"{m.group(0)}\": name the raw product Q·Kᵀ, "
                            "the scaled one \"scaled scores\" (the lessons' `scores` differ)")
    return en


ID_RE = re.compile(r"[a-z_]+(?:\.[\w]+)+\.?")
GROUPS = set()


def check_module(name, ids, pending):
    GROUPS.update(k.split(".")[0] for k in ids if "." in k)
    src = open(os.path.join(WEB, name), encoding="utf-8").read()
    lines = src.split("\n")
    off, quiet = False, set()
    for k, text in enumerate(lines, 1):
        if EXEMPT + " off" in text:
            off = True
        if off or EXEMPT in text:
            quiet.add(k)
        if EXEMPT + " on" in text:
            off = False
    found = []
    for text, line, callee, arg, key, before, first, compared in literals(src):
        where = f"server/web/{name}:{line}"
        if callee in ("t", "nodes", "msg", "say") and arg == (1 if callee == "say" else 0) and not compared:
            if before.rstrip().endswith("`") or "${}" in text:
                prefix = text.split("${}")[0]
                if not any(k.startswith(prefix) for k in ids):
                    found.append(f"{where}: no message id starts with {prefix!r}")
            elif text not in ids and text + ".other" not in ids:
                found.append(f"{where}: {text!r} is no message id of words-en.js")
            continue
        if line in quiet:
            continue
        if ID_RE.fullmatch(text):
            # a message id handed on (an editor's hint, a field's name)
            if text.split(".")[0] in GROUPS and text not in ids and text + ".other" not in ids \
                    and not any(k.startswith(text + ".") for k in ids):
                found.append(f"{where}: {text!r} is no message id of words-en.js")
            continue
        w = words_in(text)
        if not w or compared or CSS.search(text):
            continue
        visible = (callee in VISIBLE_CALLS and arg is not None and VISIBLE_CALLS[callee][0] <= arg <= VISIBLE_CALLS[callee][1]
                   or key in VISIBLE_KEYS
                   or callee == "setAttribute" and arg == 1 and first.strip("\"' ") in VISIBLE_ATTRS
                   or VISIBLE_ASSIGN.search(before)
                   or sentence(text))
        if visible and callee not in ("querySelector", "querySelectorAll", "log", "error", "warn", "getElementById",
                                      "fetch", "addEventListener", "download", "startsWith", "endsWith", "matches"):
            found.append(f"{where}: user-visible literal {text[:70]!r}")
    # a pending module's literals wait for its helper; the ids it names are checked already
    return [f for f in found if not pending or "user-visible literal" not in f]


class PageText(HTMLParser):
    """index.html's text outside a data-i18n element, and attributes with words."""

    def __init__(self):
        super().__init__()
        self.stack, self.found = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("aria-label", "placeholder", "title"):
            if a.get(name) and words_in(a[name]) and f"data-i18n-{name}" not in a:
                self.found.append(f"server/web/index.html:{self.getpos()[0]}: {name}={a[name]!r} has no data-i18n-{name}")
        if tag not in ("meta", "link", "input", "br", "hr", "img"):
            self.stack.append((tag, "data-i18n" in a or "data-ph" in a))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        inside = [t for t, _ in self.stack]
        if any(named for _, named in self.stack) or "script" in inside or "style" in inside or "title" in inside:
            return
        if words_in(data.replace("W_q", "").replace("→", " ")) and any(len(w) > 1 for w in words_in(data)):
            self.found.append(f"server/web/index.html:{self.getpos()[0]}: text {data.strip()[:60]!r} has no data-i18n")


def check_page(ids):
    html = open(os.path.join(WEB, "index.html"), encoding="utf-8").read()
    for m in re.finditer(r'data-i18n(?:-[\w-]+)?="([^"]+)"', html):
        if m.group(1) not in ids:
            yield_error(f"server/web/index.html: {m.group(1)} is no message id of words-en.js")
    body = html[html.index("<body"):]
    p = PageText()
    p.feed(body)
    for f in p.found:
        yield_error(f)


# The rule, proved on a module it must refuse and one it must pass, each run.
SELF_TEST_BAD = """
setStatus("The server did not answer.", "bad");
$("x").textContent = `Token ${t} of ${n}`;
el("button", { type: "button", "aria-label": "Close the explanation" }, "Close");
el("p", {}, cond ? "each head" : "");
throw new ClientError("/x", `X row ${i}: not a number`);
const words = ["Input: one row per token (n × d)."];
t("no.such.id");
"""
SELF_TEST_GOOD = """
setStatus(msg("request.computing"), "bad");
el("span", { class: "num", title: exactText(v) }, fmt(v), " → ", "Q·Kᵀ", "W_q");
if (mode === "grid") el("td", {}, "·");
const re = /"([^"]+)" is (\w+)/;  // a regex, not words
// "a comment is not words either"
"""


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("bad.js", SELF_TEST_BAD), ("good.js", SELF_TEST_GOOD)):
            open(os.path.join(d, name), "w").write(text)
        global WEB
        web, WEB = WEB, d
        try:
            bad = check_module("bad.js", {"request.computing"}, False)
            good = check_module("good.js", {"request.computing"}, False)
        finally:
            WEB = web
    assert len(bad) == 8, "\n".join(["the rule missed some of the 7 literals and the unknown id:"] + bad)
    assert good == [], "\n".join(["the rule refused what is no words:"] + good)


def main():
    self_test()
    ids = check_catalogs()
    if "--pending" in sys.argv:
        print("\n".join(sorted(PENDING)))
        return 0
    names = sorted(f for f in os.listdir(WEB) if f.endswith(".js") and f not in NOT_MODULES)
    for name in names:
        for e in check_module(name, ids, name in PENDING):
            yield_error(e)
    for name in PENDING:
        if not os.path.exists(os.path.join(WEB, name)):
            yield_error(f"tools/check_words.py: PENDING names {name}, which is no module")
    check_page(ids)
    for e in ERRORS:
        print(e, file=sys.stderr)
    if ERRORS:
        print(f"check_words: {len(ERRORS)} problems ({len(PENDING)} modules pending)", file=sys.stderr)
        return 1
    print(f"check_words: {len(ids)} messages in {len(LANGS)} languages; {len(names) - len(PENDING)} modules read, "
          f"{len(PENDING)} pending")
    return 0


if __name__ == "__main__":
    sys.exit(main())
