#!/usr/bin/env bash
# Installs every package Vigil needs to build, test and benchmark, from Debian's archive only.
# Idempotent: when everything is present it checks and returns in well under a second.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make git pkg-config
  clang libclang-rt-14-dev clang-format   # fuzzing (libFuzzer) and the format check
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libyaml-cpp-dev
  libsqlite3-dev libzstd-dev libcpp-httplib-dev libeigen3-dev
  libboost-dev                            # Boost.Math: gamma, Poisson, chi-squared; Beast/Asio: HTTP
  libssl-dev openssl                      # TLS of `vigil serve` and its clients, SHA-256 idempotency keys; test certs
  libsimdjson-dev libre2-dev              # fleet JSONL at GB/s; linear-time regexes of rule files
  libhowardhinnant-date-dev tzdata        # time zones: sacct prints the cluster's local time
  libgtest-dev libgmock-dev libbenchmark-dev
  mbw fio                                 # reference tools for docs/benchmarks.md
  python3-yaml shellcheck                 # the Kubernetes manifests' and contrib scripts' checks
  prometheus                              # the real Prometheus of the detector's end-to-end test
  slurmctld slurmd slurm-client           # the real Slurm of the drain and resume tests (auth/none, loopback)
  openmpi-bin iproute2                    # mpirun of `vigil fleet run`; its test's namespaces, veth and tc
  chromium-headless-shell                 # loads the dashboard in the fleet service's end-to-end test
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
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
