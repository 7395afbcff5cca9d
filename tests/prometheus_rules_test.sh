#!/bin/sh
# contrib/prometheus/vigil-rules.yml is valid for Prometheus (`promtool check rules`) and each
# rule fires, and stays silent, as its unit tests in vigil-rules.test.yml say (`promtool test
# rules`). Exit 77 (CTest's SKIP_RETURN_CODE) when promtool is not installed: Debian's
# prometheus package ships it (scripts/setup.sh).
set -eu

rules_dir="$(cd "$(dirname "$0")/../contrib/prometheus" && pwd)"
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool is not installed (apt-get install prometheus)"
  exit 77
fi
promtool check rules "$rules_dir/vigil-rules.yml"
promtool test rules "$rules_dir/vigil-rules.test.yml"
