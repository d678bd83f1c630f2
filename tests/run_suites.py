#!/usr/bin/env python3
"""Runs `make test`'s suites, one make each, and prints what each took.

    run_suites.py --make MAKE --log-dir DIR [--keep-going]
                  [--beside SUITE]... [--alone SUITE]... FIRST SUITE...

FIRST (the build) runs before any other.  Then the suites run one after
another in the order given, their output printed as it comes.  Those
named by --beside run meanwhile, one after another in a second lane, each
into its own log file (DIR/SUITE.log) that is printed whole between two
suites of the first lane: suites that mostly wait (on the network, the
disk) beside suites that compute on one core.  A suite named by --alone
(its timings want a quiet machine) never runs beside one of the second
lane: while the second lane is busy, the first lane runs its next suite
that is not --alone first.

Each suite runs in a session of its own (setsid): `timeout` and the
browsers start process groups of their own, which a signal to the suite's
group would miss.  Stopping a suite stops every process of its session and
every process descended from one (SIGTERM, then SIGKILL after STOP_GRACE_S);
so does SIGINT, SIGTERM or SIGHUP to this runner, which then prints the
table below (what ran till then) and exits 128 + the signal's number.  A suite that ends leaving a process running is told so and
the process stopped.

The first failure ends the run (a suite of the other lane is stopped) and
its exit status is 1; with --keep-going (`make -k test`) every suite runs
and the status is 1 if any failed.  At the end a table prints each suite's
wall-clock seconds and CPU seconds, also written to DIR/times.txt.  The CPU
is the larger of two counts that each miss some: user + system seconds of
the suite's make and of every process it waited for (not a browser's
renderers, which no process of the suite waits for), and the sum of each
process's own seconds, last seen by a look at the suite's processes every
SAMPLE_S (not a process that lived less).
"""
import argparse
import os
import signal
import subprocess
import sys
import threading
import time


STOP_GRACE_S = 5  # from SIGTERM to SIGKILL: a server's drain takes < 1 s
SAMPLE_S = 1.0  # between two looks at the suites' processes' CPU seconds
TICK = os.sysconf("SC_CLK_TCK")


def processes():
    """{pid: (ppid, session, CPU seconds, start time, state)} of every
    process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:  # it ended meanwhile
            continue
        # after "pid (comm) ": state ppid pgrp session ... utime stime ...
        fields = stat[stat.rfind(")") + 2:].split()
        out[int(name)] = (int(fields[1]), int(fields[3]),
                          (int(fields[11]) + int(fields[12])) / TICK,
                          fields[19], fields[0])
    return out


def members(session, procs):
    """The pids of the session and every process descended from one."""
    found = {pid for pid, p in procs.items() if p[1] == session}
    grew = True
    while grew:
        more = {pid for pid, p in procs.items()
                if p[0] in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def stop_session(session):
    """Stops every process of `session` (and descended from one): SIGTERM,
    then SIGKILL after STOP_GRACE_S; returns how many there were."""
    deadline, sig, count = time.monotonic() + STOP_GRACE_S, signal.SIGTERM, 0
    signalled = set()
    while True:
        procs = processes()
        # a zombie has ended: its parent (this runner for make) reaps it
        pids = {pid for pid in members(session, procs)
                if procs[pid][4] != "Z"}
        if not pids:
            return count
        for pid in pids - signalled if sig == signal.SIGTERM else pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        count = max(count, len(pids | signalled))
        signalled |= pids
        if sig == signal.SIGTERM and time.monotonic() >= deadline:
            sig = signal.SIGKILL
        time.sleep(0.05)


class Suite:
    def __init__(self, name, lane):
        self.name, self.lane = name, lane
        self.status = "not run"
        self.wall = self.cpu = 0.0
        self.log = None
        self.seen = {}  # (pid, start time) -> its CPU seconds, last seen
        self.start = None  # time.monotonic() when it started


class Runner:
    def __init__(self, make, log_dir, keep_going):
        self.make, self.log_dir, self.keep_going = make, log_dir, keep_going
        self.stop = threading.Event()  # a failure ends the run
        self.quiet = threading.Lock()  # held by a --alone suite or a beside one
        self.lock = threading.Lock()  # running, finished_logs
        self.running = {}  # lane -> (Suite, Popen)
        self.finished_logs = []  # beside suites whose log is not printed yet
        self.started = []  # the session of every suite started

    def run(self, suite, out):
        """Runs make SUITE with output to `out` (None: this terminal)."""
        if self.stop.is_set():
            return
        cmd = self.make + ["--no-print-directory", suite.name]
        suite.start = time.monotonic()
        with self.lock:
            if self.stop.is_set():
                return
            proc = subprocess.Popen(cmd, stdout=out, stderr=out,
                                    start_new_session=True)
            self.running[suite.lane] = (suite, proc)
            self.started.append(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        left = stop_session(proc.pid)
        with self.lock:
            del self.running[suite.lane]
        suite.wall = time.monotonic() - suite.start
        suite.cpu = max(usage.ru_utime + usage.ru_stime,
                        sum(suite.seen.values()))
        if left and not self.stop.is_set():
            print(f"run_suites: {suite.name} ended and left {left} "
                  "process(es) running: stopped them", file=out or sys.stdout,
                  flush=True)
        if self.stop.is_set() and proc.returncode != 0:
            suite.status = "stopped"
        else:
            suite.status = "passed" if proc.returncode == 0 else "FAILED"
        if suite.status == "FAILED" and not self.keep_going:
            self.fail()

    def fail(self):
        """Stops the other lane's suite: the run ends at its first failure."""
        self.stop.set()
        with self.lock:
            sessions = [proc.pid for _, proc in self.running.values()]
        for session in sessions:
            stop_session(session)

    def stop_all(self):
        """Stops every process of every suite started (after a signal)."""
        self.stop.set()
        with self.lock:  # no suite starts after this
            sessions = list(self.started)
        for session in sessions:
            stop_session(session)

    def sample(self):
        """Notes each running suite's processes' CPU seconds, every SAMPLE_S."""
        while True:
            procs = processes()
            with self.lock:
                running = list(self.running.values())
            for suite, proc in running:
                for pid in members(proc.pid, procs):
                    suite.seen[(pid, procs[pid][3])] = procs[pid][2]
            time.sleep(SAMPLE_S)

    def beside(self, suites):
        for suite in suites:
            suite.log = os.path.join(self.log_dir, suite.name + ".log")
            with self.quiet, open(suite.log, "w") as out:
                self.run(suite, out)
            with self.lock:
                self.finished_logs.append(suite)

    def print_finished_logs(self):
        with self.lock:
            done, self.finished_logs = self.finished_logs, []
        for suite in done:
            print_log(suite)


def print_log(suite):
    if suite.status == "not run":
        return
    print(f"==== {suite.name} ({suite.lane} lane, {suite.status} in "
          f"{suite.wall:.0f} s): its output, from {suite.log}", flush=True)
    with open(suite.log, errors="replace") as f:
        sys.stdout.writelines(f)
    print(f"==== end of {suite.name}", flush=True)


def print_table(suites, wall, path):
    rows = [("suite", "lane", "status", "wall s", "CPU s")]
    rows += [(s.name, s.lane, s.status, f"{s.wall:.0f}", f"{s.cpu:.0f}")
             for s in suites]
    failed = sum(s.status == "FAILED" for s in suites)
    rows.append(("all", "", f"{failed} failed", f"{wall:.0f}",
                 f"{sum(s.cpu for s in suites):.0f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.rjust(w) if i >= 3 else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(f"\nmake test: what each suite took (also in {path})")
    sys.stdout.write(text)
    sys.stdout.flush()


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """A signal to stop the run: args[0] its number."""


def on_signal(signum, _frame):
    for sig in SIGNALS:  # one is enough: stopping takes a few seconds
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--make", required=True, help="the make command")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("--beside", action="append", default=[])
    ap.add_argument("--alone", action="append", default=[])
    ap.add_argument("suites", nargs="+")
    args = ap.parse_args()
    # a suite renamed or split in its suite.mk and not in the Makefile's
    # lists would run in the wrong lane: a timed one beside another
    unknown = sorted(set(args.beside + args.alone) - set(args.suites))
    if unknown:
        ap.error(f"--beside/--alone name no suite given: {' '.join(unknown)}")
    os.makedirs(args.log_dir, exist_ok=True)
    runner = Runner(args.make.split(), args.log_dir, args.keep_going)
    serial = [Suite(n, "first") for n in args.suites if n not in args.beside]
    beside = [Suite(n, "second") for n in args.suites if n in args.beside]
    for sig in SIGNALS:
        signal.signal(sig, on_signal)
    threading.Thread(target=runner.sample, daemon=True).start()
    start = time.monotonic()
    try:
        run_all(args, runner, serial, beside, start)
    except Stopped as e:
        print(f"run_suites: stopped by signal {e.args[0]}: stopping every "
              "suite's processes", flush=True)
        runner.stop_all()
        for suite in serial + beside:  # what ran, what it took till then
            if suite.status == "not run" and suite.start is not None:
                suite.status = "stopped"
                suite.wall = time.monotonic() - suite.start
                suite.cpu = sum(suite.seen.values())
        print_table(in_order(args, serial + beside), time.monotonic() - start,
                    os.path.join(args.log_dir, "times.txt"))
        sys.exit(128 + e.args[0])


def in_order(args, suites):
    """The suites in the order given."""
    order = {n: i for i, n in enumerate(args.suites)}
    return sorted(suites, key=lambda s: order[s.name])


def run_all(args, runner, serial, beside, start):
    first, todo = serial[0], serial[1:]
    print(f"==== {first.name} (before the other suites)", flush=True)
    with runner.quiet:
        runner.run(first, None)
    lane = threading.Thread(target=runner.beside, args=(beside,), daemon=True)
    lane.start()
    while todo and not runner.stop.is_set():
        runner.print_finished_logs()
        # the next suite that may run now; else the next, once it may
        for suite in todo:
            quiet = suite.name in args.alone
            if not quiet or runner.quiet.acquire(blocking=False):
                break
        else:
            suite, quiet = todo[0], True
            runner.quiet.acquire()
        todo.remove(suite)
        print(f"==== {suite.name} ({len(serial) - len(todo) - 1} of "
              f"{len(serial) - 1} in the first lane"
              f"{', alone' if quiet else ''})", flush=True)
        try:
            runner.run(suite, None)
        finally:
            if quiet:
                runner.quiet.release()
    lane.join()
    runner.print_finished_logs()
    suites = in_order(args, serial + beside)
    print_table(suites, time.monotonic() - start,
                os.path.join(args.log_dir, "times.txt"))
    sys.exit(0 if all(s.status == "passed" for s in suites) else 1)


if __name__ == "__main__":
    main()
