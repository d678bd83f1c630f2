#!/usr/bin/python3
"""Unpack a Debian root of another architecture, without running any of it.

    debian_root.py --arch arm64 --root DIR --cache DIR PACKAGE...

`debootstrap --foreign --variant=minbase --include=PACKAGE,...` resolves the
packages' dependencies and fetches them (from the mirror this machine's apt
uses, docker/debian-mirror.sh; the suite is this machine's own) and unpacks
the essential ones; every fetched package is then unpacked the way debootstrap
does it (dpkg-deb's data, directory symlinks such as /lib -> usr/lib kept).
Nothing of the root is run, so its maintainer scripts are not either; of them
only the `update-alternatives --install` calls matter to a program that links
or loads libraries (libopenblas.so.0 and cblas.h are alternatives), and they
are applied as links (relative, so that they resolve inside the root).

The root serves two purposes in tests/arch: a sysroot to cross-compile
against (`make SYSROOT=DIR`) and the root qemu-aarch64 loads libraries from
(`-L DIR`).  Written beside it: DIR.files, one "path<TAB>package" line per
file the packages hold, and DIR.packages, the packages asked for (the root is
rebuilt when that list changes).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MIRROR = os.path.join(HERE, "..", "..", "docker", "debian-mirror.sh")
ALTERNATIVE = re.compile(
    r"update-alternatives\s+--install\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)"
    r"((?:\s+--slave\s+\S+\s+\S+\s+\S+)*)")
SLAVE = re.compile(r"--slave\s+(\S+)\s+(\S+)\s+(\S+)")


def run(argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def suite():
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"')
    raise SystemExit("no VERSION_CODENAME in /etc/os-release")


def debootstrap(arch, root, cache, packages, log_path):
    release = suite()
    mirror = subprocess.run([MIRROR, release, "debian"], check=True,
                            capture_output=True, text=True).stdout.strip()
    if not mirror:
        raise SystemExit(f"no Debian mirror for {release} in apt's sources")
    argv = ["debootstrap", f"--arch={arch}", "--foreign",
            "--variant=minbase", f"--cache-dir={cache}",
            "--include=" + ",".join(packages), release, root, mirror]
    print(f"debian_root: debootstrap --arch={arch} --foreign "
          f"--variant=minbase --include=... {release} from {mirror}",
          flush=True)
    with open(log_path, "w") as log:
        if subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT).returncode:
            with open(log_path) as f:
                sys.stderr.write("".join(f.readlines()[-20:]))
            raise SystemExit("debootstrap failed")


def unpack(deb, root):
    data = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb],
                            stdout=subprocess.PIPE)
    run(["tar", "-C", root, "--keep-directory-symlink", "-xf", "-"],
        stdin=data.stdout)
    data.stdout.close()
    if data.wait():
        raise SystemExit(f"dpkg-deb failed on {deb}")


def contents(deb):
    """The package's name and the paths it holds (files and links)."""
    name = run(["dpkg-deb", "-f", deb, "Package"], capture_output=True,
               text=True).stdout.strip()
    listing = run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True)
    paths = run(["tar", "-t"], input=listing.stdout,
                capture_output=True).stdout.decode().split("\n")
    return name, [p[1:] for p in paths if p.startswith("./") and
                  not p.endswith("/")]


def alternatives(deb):
    """(link, path, priority) of every update-alternatives --install in the
    package's postinst, slaves with their master's priority."""
    with tempfile.TemporaryDirectory() as control:
        run(["dpkg-deb", "-e", deb, control])
        script = os.path.join(control, "postinst")
        if not os.path.exists(script):
            return []
        with open(script) as f:
            text = f.read().replace("\\\n", " ")
    found = []
    for link, _name, path, priority, slaves in ALTERNATIVE.findall(text):
        found.append((link, path, int(priority)))
        found += [(s_link, s_path, int(priority))
                  for s_link, _s_name, s_path in SLAVE.findall(slaves)]
    return found


def link_alternatives(root, debs):
    best = {}
    for deb in debs:
        for link, path, priority in alternatives(deb):
            if "$" in link or "$" in path:
                raise SystemExit(f"{deb}: update-alternatives with a "
                                 f"variable: {link} {path}")
            if os.path.lexists(root + path) and (
                    link not in best or priority > best[link][1]):
                best[link] = (path, priority)
    for link, (path, _priority) in sorted(best.items()):
        target = root + link
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.lexists(target):
            os.remove(target)
        os.symlink(os.path.relpath(root + path, os.path.dirname(target)),
                   target)
    return len(best)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", required=True, help="Debian architecture")
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache", required=True,
                    help="where debootstrap keeps the packages it fetched")
    ap.add_argument("packages", nargs="+")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    cache = os.path.abspath(args.cache)
    wanted = "\n".join(sorted(set(args.packages))) + "\n"
    stamp = root + ".packages"
    if os.path.isdir(root) and os.path.exists(stamp) and \
            open(stamp).read() == wanted:
        print(f"debian_root: {root} is up to date")
        return 0
    os.makedirs(cache, exist_ok=True)
    work = root + ".tmp"
    shutil.rmtree(work, ignore_errors=True)
    debootstrap(args.arch, work, cache, sorted(set(args.packages)),
                root + ".log")
    archives = os.path.join(work, "var", "cache", "apt", "archives")
    debs = sorted(os.path.join(archives, f) for f in os.listdir(archives)
                  if f.endswith(".deb"))
    index = []
    for deb in debs:
        unpack(deb, work)
        name, paths = contents(deb)
        index += [f"{p}\t{name}\n" for p in paths]
    links = link_alternatives(work, debs)
    for deb in debs:
        os.remove(deb)
    shutil.rmtree(os.path.join(work, "debootstrap"), ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    os.rename(work, root)
    with open(root + ".files", "w") as f:
        f.writelines(index)
    with open(stamp, "w") as f:
        f.write(wanted)
    print(f"debian_root: {root}: {len(debs)} packages unpacked, "
          f"{links} alternatives linked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
