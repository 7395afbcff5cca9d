#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (Google style, .clang-format) makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
[ ${#files[@]} -eq 0 ] && exit 0
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/vigil-format.$$; then
  head -40 /tmp/vigil-format.$$ >&2
  rm -f /tmp/vigil-format.$$
  echo "check-format: run 'make format'" >&2
  exit 1
fi
rm -f /tmp/vigil-format.$$
echo "check-format: ${#files[@]} files formatted"
