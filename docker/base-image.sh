#!/bin/bash
# base-image.sh IMAGE TARBALL [containers-storage options...]
#
# Makes sure IMAGE (the Dockerfile's FROM, e.g. debian:bookworm-slim) is in the local container storage, without
# a container registry (none is reachable on the machines this project runs on):
#   1. already in storage                     -> nothing to do;
#   2. TARBALL exists (a cache from a past run) -> `podman import` it;
#   3. otherwise debootstrap a minimal Debian into a temporary root, slim it the way the official -slim images are
#      slimmed (no man pages, docs or locales, now or in later installs), pack it into TARBALL and import that.
# The Debian mirror is the one apt on this machine already uses, read from /etc/apt/sources.list* now; the image's
# apt sources get the same mirror (plus its -updates and -security suites when this machine has them).
set -euo pipefail

here=$(dirname "$0")
image=$1
tarball=$2
shift 2
store=("$@")

if podman "${store[@]}" image exists "$image"; then
    echo "base image $image: in local storage"
    exit 0
fi

if [ ! -s "$tarball" ]; then
    suite=${image##*:}
    suite=${suite%-slim}
    mirror=$("$here/debian-mirror.sh" "$suite" debian)
    if [ -z "$mirror" ]; then
        echo "no Debian mirror for $suite in /etc/apt/sources.list*" >&2
        exit 1
    fi
    security=$("$here/debian-mirror.sh" "$suite-security" debian-security)
    updates=$("$here/debian-mirror.sh" "$suite-updates" debian)

    work=$(mktemp -d "${TMPDIR:-/tmp}/base-image.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    root=$work/rootfs
    echo "base image $image: debootstrap --variant=minbase $suite from $mirror"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log" >&2; exit 1; }

    # apt sources as the official image has them (deb822), from this machine's mirrors
    rm -f "$root/etc/apt/sources.list"
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s%s\nComponents: main\n' "$mirror" "$suite" \
            "${updates:+ $suite-updates}"
        printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
        if [ -n "$security" ]; then
            printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' "$security" "$suite"
            printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
        fi
    } >"$root/etc/apt/sources.list.d/debian.sources"

    # slim: what the official -slim variant leaves out, also for packages installed later
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
CFG
    cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
    echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/{man,info,locale,groff,lintian,linda}/* \
        "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
        "$root"/var/log/* "$root"/tmp/* "$root"/debootstrap
    : >"$root/etc/hostname"
    : >"$root/etc/resolv.conf"

    mkdir -p "$(dirname "$tarball")"
    tar --numeric-owner --xattrs -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
fi

echo "base image $image: importing $tarball"
podman "${store[@]}" import --quiet --change 'CMD ["bash"]' "$tarball" "$image" >/dev/null
podman "${store[@]}" image exists "$image"
