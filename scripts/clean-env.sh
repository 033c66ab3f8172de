#!/bin/sh
# scripts/clean-env.sh: runs the README's test command on a machine that
# has only what scripts/deps.sh installs. Builds a minimal Debian 12
# (bookworm) chroot with debootstrap, copies this repository into it
# (the files git tracks, as they are in the working tree), and inside it runs
#     sh scripts/deps.sh && sh scripts/test.sh
# as root (the README allows root or a sudo user; t0400's private network
# namespace needs root inside a chroot). A program or Python module a test
# uses that deps.sh does not install fails or skips here, where a
# developer's machine would hide it.
#
#   sh scripts/clean-env.sh [DIR]   (root; DIR default /var/tmp/cairn-clean-env)
#
# The Debian mirror is read from this host's apt sources at run time
# (CAIRN_MIRROR overrides it). The debootstrapped base, before deps.sh, is
# kept as DIR.base.tar.gz and reused by the next run (CAIRN_FRESH=1 builds
# it again). ../shared beside the repo, if there, is mounted read-only at
# the same place so the real-transcript comparisons run. The log is
# DIR.log; the exit code is the test command's.
set -eu
[ "$(id -u)" -eq 0 ] || { echo "clean-env: run as root (debootstrap, chroot, mounts)" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-/var/tmp/cairn-clean-env}
SUITE=bookworm
LOG=$DIR.log
command -v debootstrap >/dev/null 2>&1 || {
    echo "clean-env: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
# Our own mount namespace: every mount below goes away with this process.
if [ -z "${CAIRN_CLEAN_ENV_NS:-}" ]; then
    CAIRN_CLEAN_ENV_NS=1 exec unshare -m --propagation private sh "$ROOT/scripts/clean-env.sh" "$DIR"
fi

# sources_uri SUITE: the first URI this host's apt uses for SUITE, from
# one-line (sources.list, *.list) or deb822 (*.sources) files.
sources_uri() {
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v s="$1" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++;
            if ($i ~ /^\[/ || $i ~ /\]$/) i++; if ($(i + 1) == s) { print $i; exit } }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$1" 'BEGIN { RS = ""; FS = "\n" }
            { uri = ""; hit = 0; deb = 0
              for (k = 1; k <= NF; k++) {
                  if ($k ~ /^URIs:/) { split($k, u, /[ \t]+/); uri = u[2] }
                  if ($k ~ /^Types:.*(^|[ \t])deb([ \t]|$)/) deb = 1
                  if ($k ~ /^Suites:/) { n = split($k, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == s) hit = 1 }
              }
              if (deb && hit && uri != "") { print uri; exit } }' "$f"
    done
}
MIRROR=${CAIRN_MIRROR:-$(sources_uri $SUITE | head -1)}
SECURITY=$(sources_uri $SUITE-security | head -1)
[ -n "$MIRROR" ] || { echo "clean-env: no $SUITE source in /etc/apt; set CAIRN_MIRROR" >&2; exit 2; }

mounts=""
cleanup() {
    for m in $mounts; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM
bind() {   # SRC DEST [ro]
    mkdir -p "$2"
    mount --bind "$1" "$2"
    [ "${3:-}" = ro ] && mount -o remount,bind,ro "$2"
    mounts="$2 $mounts"
}

exec >"$LOG" 2>&1
echo "clean-env: $(date -u +%FT%TZ) $SUITE from $MIRROR${SECURITY:+ (security: $SECURITY)}"
t0=$(date +%s)
rm -rf "$DIR"
mkdir -p "$DIR"
if [ -f "$DIR.base.tar.gz" ] && [ -z "${CAIRN_FRESH:-}" ]; then
    echo "clean-env: reusing the debootstrapped base $DIR.base.tar.gz"
    tar xzf "$DIR.base.tar.gz" -C "$DIR"
else
    # minbase: Essential and apt only; not even Priority: important.
    debootstrap --variant=minbase "$SUITE" "$DIR" "$MIRROR"
    {
        echo "deb $MIRROR $SUITE main"
        echo "deb $MIRROR $SUITE-updates main"
        [ -n "$SECURITY" ] && echo "deb $SECURITY $SUITE-security main"
    } > "$DIR/etc/apt/sources.list"
    tar czf "$DIR.base.tar.gz" -C "$DIR" .
fi
echo "clean-env: base ready after $(( $(date +%s) - t0 )) s"
cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null || true
# A host behind a TLS-inspecting egress proxy trusts its CA through
# /usr/local/share/ca-certificates; without it npm in the chroot fails with
# SELF_SIGNED_CERT_IN_CHAIN and the npm-based tests skip. That is the
# network's trust, not a package, so it is carried over: the chroot's
# update-ca-certificates adds it once deps.sh has installed ca-certificates,
# and node (which keeps its own CA list) is pointed at the merged bundle.
hostca=""
for c in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$c" ] || continue
    mkdir -p "$DIR/usr/local/share/ca-certificates"
    cp "$c" "$DIR/usr/local/share/ca-certificates/"
    hostca=1
done
[ -n "$hostca" ] && echo "clean-env: carrying over the host's local CA certificates"
echo "clean-env: testing $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"

# The repository at the same path as here, so ../shared resolves the same.
mkdir -p "$DIR$ROOT"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 tar cf - --no-recursion --ignore-failed-read 2>/dev/null) | tar xf - -C "$DIR$ROOT"
if [ -d "$ROOT/../shared" ]; then
    bind "$(cd "$ROOT/../shared" && pwd -P)" "$DIR$(dirname "$ROOT")/shared" ro
fi
mount -t proc proc "$DIR/proc"; mounts="$DIR/proc $mounts"
bind /sys "$DIR/sys" ro
bind /dev "$DIR/dev"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$DIR/dev/pts" 2>/dev/null && mounts="$DIR/dev/pts $mounts" || true
mount -t tmpfs tmpfs "$DIR/dev/shm"; mounts="$DIR/dev/shm $mounts"

set +e
chroot "$DIR" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" CAIRN_CI="${CAIRN_CI:-}" \
    ${hostca:+NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt} \
    sh -c "cd '$ROOT' && sh scripts/deps.sh &&
        { [ -z '$hostca' ] || update-ca-certificates >/dev/null; } && sh scripts/test.sh"
rc=$?
echo "clean-env: exit $rc after $(( $(date +%s) - t0 )) s"
exit $rc
