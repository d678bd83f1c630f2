"""Are the core's row loops the vector code of each SIMD level they are built
for?  Reads the disassembly of the objects that hold them (objdump -d) and
fails when a level's build of a loop has no instruction of that level's
vector registers, or compares floating-point numbers one at a time (x86's
ucomiss, comisd, cmpltss...; AArch64's fcmp): the signature of a loop the
compiler left scalar, a compare and a branch per element.

    check_vector_code.py [--objdump OBJDUMP] OBJECT...

A compiler that scalarises a loop then fails the build's tests, not just its
speed.  The loops are found by their names, LOOP_LEVEL_TYPE (softmax_rows.c's
variants: exp_row_avx2_f32, ...; attend_kernels.c's attend_scores_avx2_f32,
...), and every one the architecture must have is
required, so a renamed loop cannot slip past unchecked; the clones GCC makes
of a function (row_max_avx2_f32.part.0) count as part of it.
"""
import argparse
import re
import subprocess
import sys

# the loops and the levels each architecture builds them for, by object:
# softmax_rows.c's row loops, attend_kernels.c's products (x86-64 only)
LOOPS = {
    "softmax_rows.o": (["exp_row", "row_max", "row_abs_max", "scale_row",
                        "normalize_row", "all_finite"],
                       {"x86_64": ["generic", "avx2", "avx512"],
                        "aarch64": ["generic"]}),
    "attend_kernels.o": (["attend_scores", "attend_product"],
                         {"x86_64": ["avx2", "avx512"], "aarch64": []}),
}
TYPES = ["f32", "f64"]

# x86-64: a scalar floating-point comparison (AT&T mnemonics as objdump
# prints them; cmpss's predicates are spelled into the mnemonic)
X86_SCALAR_COMPARE = re.compile(r"^v?(u?comis[sd]|cmp[a-z]*s[sd])$")
# a packed SSE/AVX operation on floats or integers (not a move, which a
# scalar loop uses too)
X86_PACKED = re.compile(
    r"^v?(add|sub|mul|div|max|min|and|andn|or|xor|cmp[a-z]*|blendv|"
    r"fn?m(add|sub)[0-9]*|sqrt|round)p[sd]$|^v?p(add|sub|and|andn|or|xor|"
    r"cmp[a-z]+|max[a-z]+|min[a-z]+|sll|srl|sra)[bwdq]?$")
X86_REGISTERS = {"generic": "xmm", "avx2": "ymm", "avx512": "zmm"}
# AArch64: a NEON vector operand (v0.4s, v1.2d) and the scalar compare
A64_VECTOR = re.compile(r"\bv[0-9]+\.(2d|4s|8h|16b|2s|4h|8b)\b")
A64_SCALAR_COMPARE = re.compile(r"^fcmpe?$")


def functions(obj, objdump):
    """{symbol: [(mnemonic, operands)]} of an object's code."""
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", obj],
                          capture_output=True, text=True, check=True).stdout
    found, name = {}, None
    for line in text.splitlines():
        head = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if head:
            name = head.group(1)
            found[name] = []
            continue
        body = re.match(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
        if name and body:
            found[name].append((body.group(1), body.group(2)))
    return found


def architecture(obj, objdump):
    head = subprocess.run([objdump, "-f", obj], capture_output=True,
                          text=True, check=True).stdout
    if "x86-64" in head:
        return "x86_64"
    if "aarch64" in head:
        return "aarch64"
    sys.exit(f"{obj}: an architecture this check does not know:\n{head}")


def problems_x86(level, code):
    """What is wrong with one level's build of a loop on x86-64."""
    wrong = []
    register = X86_REGISTERS[level]
    if not any(register in ops and X86_PACKED.match(mn) for mn, ops in code):
        wrong.append(f"no packed instruction on {register} registers")
    wider = [r for r in ("ymm", "zmm")
             if r != register and "xmm ymm zmm".index(r)
             > "xmm ymm zmm".index(register)]
    for r in wider:
        if any(r in ops for _, ops in code):
            wrong.append(f"{r} registers, beyond the level")
    scalar = [mn for mn, ops in code
              if X86_SCALAR_COMPARE.match(mn) and "xmm" in ops]
    if scalar:
        wrong.append(f"{len(scalar)} scalar comparisons ({scalar[0]})")
    return wrong


def problems_a64(level, code):
    wrong = []
    if not any(A64_VECTOR.search(ops) for _, ops in code):
        wrong.append("no NEON vector instruction")
    scalar = [mn for mn, _ in code if A64_SCALAR_COMPARE.match(mn)]
    if scalar:
        wrong.append(f"{len(scalar)} scalar comparisons ({scalar[0]})")
    return wrong


def check(obj, objdump):
    """The failures of one object, as lines."""
    arch = architecture(obj, objdump)
    code = functions(obj, objdump)
    failures, checked = [], 0
    base = obj.rsplit("/", 1)[-1]
    if base not in LOOPS:
        sys.exit(f"{obj}: not an object this check knows ({', '.join(LOOPS)})")
    loops, levels = LOOPS[base]
    for loop in loops:
        for level in levels[arch]:
            for t in TYPES:
                name = f"{loop}_{level}_{t}"
                parts = [ins for sym, body in code.items()
                         if sym == name or sym.startswith(name + ".")
                         for ins in body]
                if not parts:
                    failures.append(f"{obj}: {name}: not in the object")
                    continue
                checked += 1
                check_level = problems_x86 if arch == "x86_64" else \
                    problems_a64
                for wrong in check_level(level, parts):
                    failures.append(f"{obj}: {name}: {wrong}")
    return failures, checked


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("objects", nargs="+")
    ap.add_argument("--objdump", default="objdump")
    args = ap.parse_args()
    failures, checked = [], 0
    for obj in args.objects:
        f, c = check(obj, args.objdump)
        failures += f
        checked += c
    for line in failures:
        print(line)
    if failures:
        sys.exit(f"check_vector_code: {len(failures)} problems")
    print(f"check_vector_code: {checked} loops, each its level's vector code")


if __name__ == "__main__":
    main()
