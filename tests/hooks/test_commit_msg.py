#!/usr/bin/python3
"""The commit-msg hook (tools/hooks/commit-msg) refuses a subject over 72
characters and a subject not followed by a blank line, and lets through what
keeps the rule, as git itself runs it: each case is one message, committed in
a scratch repository whose core.hooksPath is tools/hooks, as `make hooks`
sets it.

usage: test_commit_msg.py"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HOOKS = os.path.normpath(os.path.join(HERE, "..", "..", "tools", "hooks"))

BODY = "The why and the figures, wrapped at about 72 characters.\n"
# (what the case shows, the message, whether git must accept it)
CASES = [
    ("a subject of 72 characters", "s" * 72 + "\n", True),
    ("a subject of 73 characters is refused", "s" * 73 + "\n", False),
    ("72 characters, not bytes: 72 µ", "µ" * 72 + "\n", True),
    ("a subject, a blank line and a body", "core: one job\n\n" + BODY, True),
    ("a body that starts on the second line is refused",
     "core: one job\n" + BODY, False),
    ("a long body line is the body's own business",
     "core: one job\n\n" + "b" * 200 + "\n", True),
    ("git's comment lines are not the message",
     "# a comment of git's template, longer than the subject may be, "
     "and more\ncore: one job\n# another\n\n" + BODY, True),
    ("nothing after the scissors line of git commit -v counts",
     "core: one job\n\n" + BODY +
     "# ------------------------ >8 ------------------------\n" +
     "x" * 100 + "\n", True),
    ("leading blank lines are dropped, as git drops them",
     "\n\n" + "s" * 73 + "\n", False),
]


def git(repo, *args, message=None):
    return subprocess.run(["git", "-C", repo, *args], input=message,
                          capture_output=True, text=True)


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as repo:
        git(repo, "init", "-q")
        git(repo, "config", "core.hooksPath", HOOKS)
        git(repo, "config", "user.name", "test")
        git(repo, "config", "user.email", "test@example.invalid")
        for what, message, accepted in CASES:
            done = git(repo, "commit", "-q", "--allow-empty",
                       "--cleanup=strip", "-F", "-", message=message)
            if (done.returncode == 0) != accepted:
                failures += 1
                print(f"FAIL {what}: git {'refused' if done.returncode else 'accepted'} "
                      f"it\n{done.stderr}")
            else:
                print(f"ok   {what}")
    print(f"commit-msg: {len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
