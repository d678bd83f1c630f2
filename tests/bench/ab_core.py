"""Compare builds of the core: which of two bench_core binaries is faster, and
by how much, beyond this machine's noise.

    ab_core.py BENCH_CORE_A BENCH_CORE_B [--case "float32 1024 512 8 1 0"]...
               [--rounds 24] [--calls 3] [--level avx2]

Each round starts every binary afresh (A, B and A again as a control, in
turn, the order reversed every other round), lets it make its inputs, runs
each case once to warm up and then CALLS times, and quits.  Prints, per
case, each binary's median milliseconds per call over the rounds and the
ratios A ÷ B and A ÷ control: the control's ratio is the noise the B ratio
must stand out from.

Why fresh processes: a long-lived process keeps the physical pages, and so
the cache sets, it first got.  On this machine six long-lived copies of one
binary, asked in turn, differed by up to 6 % in their medians, and one
comparison of two long-lived builds showed 6 to 10 % that fresh processes
(this script) put at 1 to 2 %.  The control still moves by 1 to 3.5 % here
(three runs): a difference smaller than that is not one.  A case is
bench_core's `attn` arguments without the call count (bench_core.c), or
"batch" and the `batch` command's (B sequences in one attn_forward(); the
batch's time is compared).
--level caps the SIMD level of both builds as the server's --kernels does
(`bench_core LEVEL`): avx2 is what a CPU without AVX-512 runs.  --cpu compares
the calling thread's CPU time instead of the wall-clock time (one thread
only: the workers' time is not in it): on a machine whose other work keeps a
process waiting for a CPU most of the time, the wall clock measures the wait.
"""
import argparse
import json
import statistics
import subprocess
import sys

DEFAULT_CASES = ["float32 1024 512 8 1 0", "float32 2048 512 8 1 0",
                 "float64 1024 512 8 1 0", "float64 2048 512 8 1 0"]


def one_process(binary, cases, calls, level, clock):
    """Milliseconds per call of each case, from one fresh process."""
    commands = "".join(f"{command(c)} 1\n{command(c)} {calls}\n"
                       for c in cases)
    done = subprocess.run([binary] + ([level] if level else []),
                          input=commands + "quit\n",
                          capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != 2 * len(cases) or any("error" in a for a in answers):
        sys.exit(f"{binary}: unexpected answers {done.stdout!r}")
    timed = answers[1::2]
    return [a[batch_key(clock) if c.startswith("batch ") else clock] /
            a["calls"] * 1e3 for c, a in zip(cases, timed)]


def command(case):
    """The bench_core command of a case, without the call count."""
    return case if case.startswith("batch ") else f"attn {case}"


def batch_key(clock):
    """The key of the batch command's answer that holds `clock`'s time."""
    return "batch_cpu_seconds" if clock == "cpu_seconds" else "batch"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--case", action="append", dest="cases")
    ap.add_argument("--rounds", type=int, default=24)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--level", help="cap the SIMD level (bench_core LEVEL)")
    ap.add_argument("--cpu", action="store_true",
                    help="the calling thread's CPU time, not the wall clock")
    args = ap.parse_args()
    cases = args.cases or DEFAULT_CASES
    clock = "cpu_seconds" if args.cpu else "seconds"
    contestants = [("A", args.a), ("B", args.b), ("control", args.a)]
    times = {(name, c): [] for name, _ in contestants for c in cases}
    for r in range(args.rounds):
        order = contestants if r % 2 == 0 else contestants[::-1]
        for name, binary in order:
            for c, ms in zip(cases, one_process(binary, cases, args.calls,
                                                args.level, clock)):
                times[name, c].append(ms)
    print(f"medians of {args.rounds} rounds, {args.calls} calls each, "
          f"fresh processes{'; level ' + args.level if args.level else ''}"
          f"{'; thread CPU time' if args.cpu else ''};"
          f" A = {args.a}, B = {args.b}")
    for c in cases:
        med = {name: statistics.median(times[name, c])
               for name, _ in contestants}
        print(f"{c}: A {fmt_ms(med['A'])} ms, B {fmt_ms(med['B'])} ms, control "
              f"{fmt_ms(med['control'])} ms; A/B {med['A'] / med['B']:.3f}, "
              f"A/control {med['A'] / med['control']:.3f}")


def fmt_ms(value):
    """Milliseconds to two decimals, or to four significant digits below
    one (a lesson-sized call takes microseconds)."""
    return f"{value:.2f}" if value >= 1 else f"{value:.4g}"


if __name__ == "__main__":
    main()
