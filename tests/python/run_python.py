#!/usr/bin/python3
"""Installs clients/python as a user would, offline, into a fresh venv that
sees the system's NumPy and PyTorch (`python3 -m venv --system-site-packages`,
then `pip install --no-build-isolation --no-index`), from a copy of the
folder (pip's build leaves files beside the sources), and runs
test_client.py with that venv's Python.  The venv uses Debian's pip (seen
through the system's site packages) instead of installing its own copy:
the same pip, and 15 to 30 s less on a busy machine.

    run_python.py [--server build/attention-server] [unittest arguments]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "clients", "python")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default="build/attention-server")
    args, rest = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="attention-client-") as tmp:
        venv, source = os.path.join(tmp, "venv"), os.path.join(tmp, "src")
        shutil.copytree(CLIENT, source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                      "__pycache__"))
        subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                        "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        subprocess.run([python, "-m", "pip", "install", "--quiet",
                        "--no-build-isolation", "--no-index", source],
                       check=True)
        env = dict(os.environ, ATTENTION_SERVER=os.path.abspath(args.server))
        # not from the sources: the installed package, from the venv
        return subprocess.run(
            [python, os.path.join(HERE, "test_client.py"), *rest],
            env=env, cwd=tmp).returncode


if __name__ == "__main__":
    sys.exit(main())
