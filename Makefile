# The two commands: `make run` and `make test`. Both install what is missing first.
# Other targets: build, package, bench, asan, fuzz, format, check-format, clean.
# `make run`, `make build` and `make package` install the build set of scripts/setup.sh (toolchain
# and libraries); the others install the development set too (docs/install.md).

ARGS ?=
FUZZ_SECONDS ?= 5

.PHONY: all setup setup-build build package run test bench asan fuzz format check-format clean

all: build

setup:
	@scripts/setup.sh --dev

setup-build:
	@scripts/setup.sh --build

build: setup-build
	@cmake --preset release >/dev/null
	@cmake --build --preset release

# build/release/vigil_<version>_<arch>.deb: the binary, docs and contrib/ (docs/install.md).
package: setup-build
	@cmake --preset release >/dev/null
	@cmake --build --preset release --target vigil
	@cpack --config build/release/CPackConfig.cmake

run: build
	./build/release/vigil run $(ARGS)

test: setup
	@cmake --preset dev >/dev/null
	@cmake --build --preset dev
	@scripts/check-format.sh
	@ctest --preset dev -j2
	@scripts/fuzz.sh $(FUZZ_SECONDS)

bench: setup
	@cmake --preset release -DVIGIL_BENCH=ON >/dev/null
	@cmake --build --preset release
	@./build/release/perf/vigil_microbench

asan: setup
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan -j2

fuzz: setup
	@scripts/fuzz.sh $(FUZZ_SECONDS)

format:
	@git ls-files '*.cc' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

check-format:
	@scripts/check-format.sh

clean:
	rm -rf build
