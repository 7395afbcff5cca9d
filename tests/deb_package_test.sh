#!/usr/bin/env bash
# The Debian package (docs/install.md), built with CPack from a build directory into a temporary one.
#   deb_package_test.sh contents CPACK BUILD_DIR
#     its control fields and files: the binary, docs and contrib scripts (executable) are in it,
#     nothing of the tests (fake_nvml, *_test, static libraries, headers) is, and Depends names
#     runtime packages only (no -dev package, compiler, Chromium, Prometheus, Slurm or OpenMPI).
#   deb_package_test.sh install CPACK BUILD_DIR
#     `apt-get install ./vigil_*.deb` in a clean Debian root made by debootstrap (minbase), then
#     `vigil version` there. Minutes and Debian's archive: runs only with VIGIL_TEST_DEB_ROOT=1,
#     as root; VIGIL_DEBIAN_MIRROR (default http://deb.debian.org/debian) and VIGIL_DEBIAN_SUITE
#     (default bookworm) choose the archive.
# Exit 77 (CTest's SKIP_RETURN_CODE) when what a mode needs is missing, saying what.
set -euo pipefail

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ $# -eq 3 ] || { echo "usage: $0 contents|install CPACK BUILD_DIR" >&2; exit 2; }
mode=$1 cpack=$2 build_dir=$3

if [ "$mode" = install ]; then
  [ "${VIGIL_TEST_DEB_ROOT:-0}" = 1 ] ||
    skip "set VIGIL_TEST_DEB_ROOT=1 to install the package in a debootstrap root (minutes, needs the archive)"
  [ "$(id -u)" -eq 0 ] || skip "debootstrap and chroot need root"
  command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
fi
for tool in dpkg-deb dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh --build)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vigil-deb-test.XXXXXX")
root="$work/root"
cleanup() {
  if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc"; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$cpack" --config "$build_dir/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
shopt -s nullglob
debs=("$work/out"/vigil_*_*.deb)
[ ${#debs[@]} -eq 1 ] || fail "expected one vigil_<version>_<arch>.deb, found: ${debs[*]:-none}"
deb=${debs[0]}
arch=$(dpkg --print-architecture)
case "$(basename "$deb")" in
  vigil_*_"$arch".deb) ;;
  *) fail "$(basename "$deb") is not named vigil_<version>_$arch.deb" ;;
esac

if [ "$mode" = contents ]; then
  depends=$(dpkg-deb --field "$deb" Depends)
  echo "$(basename "$deb"): $(stat -c %s "$deb") bytes; Depends: $depends"
  [ -n "$depends" ] || fail "no Depends"
  for p in libc6 libstdc++6 libssl3 tzdata; do
    [[ ", $depends," == *", $p "* || ", $depends," == *", $p,"* ]] || fail "Depends lacks $p"
  done
  # Each dependency's package name, without version or alternatives' bars.
  names=$(echo "$depends" | tr ',|' '\n' | sed 's/(.*//; s/ //g' | sed '/^$/d')
  bad=$(echo "$names" | grep -E -- '-dev$|^(gcc|g\+\+|clang|cmake|ninja-build|make|chromium.*|prometheus|slurm.*|openmpi.*|libgtest.*|libgmock.*|libbenchmark.*)$' || true)
  [ -z "$bad" ] || fail "Depends names build or test packages: $bad"

  # scripts/setup.sh --runtime installs the package of every library the binary links (libc6 and
  # libgcc-s1 are in every Debian).
  runtime=" libc6 libgcc-s1 $(sed -n '/^RUNTIME=(/,/^)/p' "$(dirname "$0")/../scripts/setup.sh" |
    sed 's/#.*//; s/RUNTIME=(//; s/)//' | tr -s ' \n' '  ') "
  libs=$(ldd "$build_dir/vigil")
  for so in $(readelf -d "$build_dir/vigil" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(echo "$libs" | awk -v so="$so" '$1 == so && $3 ~ /^\// {print $3}')
    [ -n "$path" ] || continue # the dynamic loader
    # dpkg knows a library by the path its package ships, before or after /lib -> usr/lib.
    pkg=$( (dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null || true) |
      cut -d: -f1 | head -1)
    [ -n "$pkg" ] || fail "no Debian package holds $path ($so)"
    [[ "$runtime" == *" $pkg "* ]] || fail "$so ($pkg) is not in scripts/setup.sh's RUNTIME list"
  done

  contents=$(dpkg-deb --contents "$deb")
  want() { # PERMISSIONS PATH: the path is in the package, with those permissions
    echo "$contents" | awk -v m="$1" -v p="./$2" '$1 == m && $6 == p {found = 1} END {exit !found}' ||
      fail "$2 is not in the package as $1"
  }
  want -rwxr-xr-x usr/bin/vigil
  want -rw-r--r-- usr/share/doc/vigil/README.md
  want -rw-r--r-- usr/share/doc/vigil/docs/install.md
  want -rwxr-xr-x usr/share/vigil/contrib/slurm/vigil-slurm-check
  want -rwxr-xr-x usr/share/vigil/contrib/kubernetes/vigil-k8s-node-action
  want -rw-r--r-- usr/share/vigil/contrib/prometheus/vigil-rules.yml
  want -rw-r--r-- usr/share/vigil/contrib/grafana/vigil-fleet.json
  for script in slurm/vigil-slurm-check kubernetes/vigil-k8s-node-action; do
    echo "$contents" | grep -qF "./usr/lib/vigil/$script -> ../../../share/vigil/contrib/$script" ||
      fail "usr/lib/vigil/$script is not a link to usr/share/vigil/contrib/$script"
  done
  unwanted=$(echo "$contents" | awk '{print $6}' |
    grep -E 'fake_nvml|_test|\.a$|\.so|/include/|microbench|/perf/|/eval/' || true)
  [ -z "$unwanted" ] || fail "test or build artefacts in the package: $unwanted"
  outside=$(echo "$contents" | awk '{print $6}' | grep -vE '^\./(usr/?|usr/(bin|share|lib/vigil)(/.*)?|usr/lib/)?$' || true)
  [ -z "$outside" ] || fail "files outside usr/bin and usr/share: $outside"
  echo "PASS: contents and Depends of $(basename "$deb")"
  exit 0
fi

mirror=${VIGIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${VIGIL_DEBIAN_SUITE:-bookworm}
start=$(date +%s)
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap $suite $mirror failed"; }
echo "debootstrap: $(($(date +%s) - start)) s, $(du -sh "$root" | cut -f1)"
if chroot "$root" sh -c 'command -v vigil' >/dev/null; then fail "vigil is in the root before install"; fi
cp "$deb" "$root/tmp/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
start=$(date +%s)
chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c \
  "apt-get update -q && apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" \
  >"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log" >&2; fail "apt-get install of the package failed"; }
echo "apt-get install: $(($(date +%s) - start)) s; $(grep -E '^[0-9]+ upgraded' "$work/apt.log")"
chroot "$root" vigil version || fail "vigil version failed in the clean root"
chroot "$root" vigil model mttf --help >/dev/null || fail "vigil model mttf --help failed in the clean root"
chroot "$root" test -x /usr/lib/vigil/slurm/vigil-slurm-check ||
  fail "the Slurm health check is not executable at /usr/lib/vigil/slurm/vigil-slurm-check"
echo "PASS: $(basename "$deb") installs in a clean $suite root and vigil runs there"
