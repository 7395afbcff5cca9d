#!/usr/bin/env bash
# Installs the Debian packages Vigil needs, from Debian's archive only, in three nested sets:
#   --runtime  what a node needs to run a `vigil` binary built elsewhere: the shared libraries it
#              loads and tzdata (the .deb's Depends, docs/install.md)
#   --build    the runtime set, and the toolchain and -dev libraries that build it from source in
#              the release preset, and package it: what `make run`, `make build` and
#              `make package` install
#   --dev      the build set, and every tool of development and tests (clang and libFuzzer,
#              GoogleTest, Prometheus, Slurm, OpenMPI, Chromium, reference tools): what `make test`
#              installs (the default)
# Idempotent: when everything is present it checks and returns in well under a second.
set -euo pipefail

usage() {
  echo "usage: scripts/setup.sh [--runtime|--build|--dev]" >&2
  exit 2
}

# Debian 12 (bookworm) names of the libraries the release binary links (`readelf -d`; libc6 and
# libgcc-s1 are in every Debian): the package's Depends, which dpkg-shlibdeps finds, by hand.
RUNTIME=(
  libstdc++6 libfmt9 libspdlog1.10 libyaml-cpp0.7 libsqlite3-0 libzstd1 libcpp-httplib0.11
  libssl3                                 # TLS of `vigil serve` and its clients; SHA-256 keys
  libsimdjson14 libre2-9 libdate-tz3
  tzdata                                  # time zones: sacct prints the cluster's local time
)
BUILD=(
  cmake ninja-build g++ make pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libyaml-cpp-dev
  libsqlite3-dev libzstd-dev libcpp-httplib-dev
  libboost-dev                            # Boost.Math: gamma, Poisson, chi-squared; Beast/Asio: HTTP
  libssl-dev
  libsimdjson-dev libre2-dev              # fleet JSONL at GB/s; linear-time regexes of rule files
  libhowardhinnant-date-dev
  libeigen3-dev                           # least squares of plan's fits; the Selector's risk model
  libbenchmark-dev                        # perf/, which the release preset builds (VIGIL_BENCH)
  dpkg-dev file                           # `make package`: CPack's Depends from dpkg-shlibdeps
)
DEV=(
  git                                     # `make format` and the format check list tracked files
  clang libclang-rt-14-dev clang-format   # fuzzing (libFuzzer) and the format check
  openssl                                 # the tests' certificates
  libgtest-dev libgmock-dev
  mbw fio                                 # reference tools for docs/benchmarks.md
  python3-yaml shellcheck                 # the Kubernetes manifests' and contrib scripts' checks
  prometheus                              # the real Prometheus of the detector's end-to-end test
  slurmctld slurmd slurm-client           # the real Slurm of the drain and resume tests (auth/none, loopback)
  openmpi-bin iproute2                    # mpirun of `vigil fleet run`; its test's namespaces, veth and tc
  chromium-headless-shell                 # loads the dashboard in the fleet service's end-to-end test
)

[ $# -le 1 ] || usage
case "${1:---dev}" in
  --runtime) PACKAGES=("${RUNTIME[@]}") ;;
  --build) PACKAGES=("${RUNTIME[@]}" "${BUILD[@]}") ;;
  --dev) PACKAGES=("${RUNTIME[@]}" "${BUILD[@]}" "${DEV[@]}") ;;
  *) usage ;;
esac

# One dpkg-query for them all (packages it does not know are missing too).
installed=" $( (dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' "${PACKAGES[@]}" 2>/dev/null || true) \
  | sed -n 's/^ii *//p' | tr '\n' ' ') "
missing=()
for p in "${PACKAGES[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root, or install sudo" >&2; exit 3; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
