#!/usr/bin/python3
"""`make test`'s runner (tests/run_suites.py) stops every process a suite
started: after SIGINT, SIGTERM or SIGHUP to the runner, after a failure in
the other lane, and what a suite left running when it ended.  Each case runs
the runner on a scratch makefile whose suites start processes the way the
real ones do: under `timeout` (a process group of its own), in a session of
their own (a browser), in the background; each writes its pid to a file.
A shell line whose `timeout` is one command of several (cd DIR && timeout
…; status=$$?) is the case a signal to make's group misses: make passes its
SIGTERM to the shell, not to the timeout in a group of its own.

usage: test_run_suites.py"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "run_suites.py")
WAIT_S = 20  # for the runner to start a suite or to end: it takes < 6 s

# a suite that runs a command writing its pid to $(D)/NAME.pid, then waits
MAKEFILE = r"""
D := {dir}
SLEEPER = $(PYTHON) -c 'import os, sys, time; \
  os.setsid() if sys.argv[2] == "session" else None; \
  open(sys.argv[1] + ".tmp", "w").write(str(os.getpid())); \
  os.rename(sys.argv[1] + ".tmp", sys.argv[1]); time.sleep(600)'
PYTHON := {python}
build:
	@true
under-timeout:
	cd $(D) && timeout 600 $(SLEEPER) $(D)/under-timeout.pid group; echo ended
own-session:
	$(SLEEPER) $(D)/own-session.pid session & wait
leaves-one:
	$(SLEEPER) $(D)/leaves-one.pid group >/dev/null 2>&1 &
	while [ ! -s $(D)/leaves-one.pid ]; do sleep 0.05; done
fails:
	while [ ! -s $(D)/beside.pid ]; do sleep 0.05; done; false
beside:
	cd $(D) && timeout 600 $(SLEEPER) $(D)/beside.pid group; echo ended
"""


def alive(pid):
    """Whether pid runs (a zombie has ended: only its reaping is left)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(what, test):
    deadline = time.monotonic() + WAIT_S
    while not test():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {WAIT_S} s")
        time.sleep(0.05)


def pid_of(d, name):
    path = os.path.join(d, name + ".pid")
    wait_for(f"{path}", lambda: os.path.exists(path))
    with open(path) as f:
        return int(f.read())


def runner(d, *args):
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(MAKEFILE.format(dir=d, python=sys.executable))
    return subprocess.Popen(
        [sys.executable, RUNNER, "--make", f"make -C {d}",
         "--log-dir", os.path.join(d, "logs"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc):
    try:
        out, _ = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the runner did not end within {WAIT_S} s")
    return proc.returncode, out


def case_signal(sig, suite):
    """A signal to the runner stops the suite's processes, then the runner,
    which prints its table: the suite stopped."""
    with tempfile.TemporaryDirectory() as d:
        proc = runner(d, "build", suite)
        pid = pid_of(d, suite)
        proc.send_signal(sig)
        status, out = finish(proc)
        try:
            assert status == 128 + sig, f"exit {status}, not {128 + sig}:\n{out}"
            assert not alive(pid), f"{suite}'s process {pid} still runs:\n{out}"
            assert re.search(rf"^{suite} +first +stopped +\d+", out, re.M), \
                f"no table row of {suite} stopped:\n{out}"
        finally:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def case_failure_stops_beside():
    """A failure in the first lane stops the second lane's suite whole."""
    with tempfile.TemporaryDirectory() as d:
        proc = runner(d, "--beside", "beside", "build", "fails", "beside")
        pid = pid_of(d, "beside")
        status, out = finish(proc)
        try:
            assert status == 1, f"exit {status}:\n{out}"
            assert "stopped" in out and "FAILED" in out, out
            assert not alive(pid), f"beside's process {pid} still runs:\n{out}"
        finally:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def case_left_running():
    """What a suite leaves running when it ends is stopped, and said."""
    with tempfile.TemporaryDirectory() as d:
        proc = runner(d, "build", "leaves-one")
        status, out = finish(proc)
        pid = pid_of(d, "leaves-one")
        try:
            assert status == 0, f"exit {status}:\n{out}"
            assert "leaves-one ended and left 1 process(es) running" in out, out
            assert not alive(pid), f"the process {pid} left still runs"
        finally:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def case_unknown_lane_name():
    """A --alone or --beside name that is no suite given is refused before
    any suite runs: a suite renamed in its suite.mk keeps no lane."""
    with tempfile.TemporaryDirectory() as d:
        proc = runner(d, "--alone", "test-gone", "build", "leaves-one")
        status, out = finish(proc)
        assert status == 2, f"exit {status}:\n{out}"
        assert "test-gone" in out, out
        assert not os.path.exists(os.path.join(d, "leaves-one.pid")), \
            f"a suite ran:\n{out}"


CASES = [
    ("SIGTERM stops a process under timeout (a group of its own)",
     lambda: case_signal(signal.SIGTERM, "under-timeout")),
    ("SIGINT stops a process under timeout",
     lambda: case_signal(signal.SIGINT, "under-timeout")),
    ("SIGHUP stops a process in a session of its own",
     lambda: case_signal(signal.SIGHUP, "own-session")),
    ("a failure stops the other lane's suite and its timeout's child",
     case_failure_stops_beside),
    ("a process a suite left running is stopped and said",
     case_left_running),
    ("a lane's name that is no suite is refused, nothing run",
     case_unknown_lane_name),
]


def main():
    failed = 0
    for name, case in CASES:
        start = time.monotonic()
        try:
            case()
            print(f"ok   {name} ({time.monotonic() - start:.1f} s)")
        except AssertionError as e:
            failed += 1
            print(f"FAIL {name}: {e}")
    print(f"run_suites: {len(CASES) - failed} of {len(CASES)} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
