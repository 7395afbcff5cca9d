# Compiler flags shared by every Vigil target, as INTERFACE libraries that targets link to.

add_library(vigil_warnings INTERFACE)
target_compile_options(vigil_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  -Wcast-align -Wimplicit-fallthrough -Wformat=2)
if(VIGIL_WERROR)
  target_compile_options(vigil_warnings INTERFACE -Werror)
endif()
# A unity build (CMAKE_UNITY_BUILD, the dev, release and fuzz presets: docs/development.md) puts
# a module's files into a few files that include them. gcc then warns of every class of a source
# file whose members use that file's anonymous namespace, which it does not in the file itself:
# the class is still defined in one place only.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(vigil_warnings INTERFACE -Wno-subobject-linkage)
endif()
# Clang checks the locks' annotations (core/mutex.h: GUARDED_BY, REQUIRES, ...), as errors in
# every clang build, -Werror or not: the fuzz preset, which `make test` builds, has no -Werror.
# gcc has no such analysis (the annotations are empty there).
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(vigil_warnings INTERFACE -Wthread-safety -Werror=thread-safety)
endif()

add_library(vigil_sanitizers INTERFACE)
if(VIGIL_SANITIZE)
  target_compile_options(vigil_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(vigil_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
# The fuzz preset: AddressSanitizer and the checks of UndefinedBehaviorSanitizer that a reader
# of outside data trips (arithmetic on parsed numbers, a float cast to an integer it does not
# fit, shifts, indexing a fixed array, a bool or enum loaded from garbage, a missing return), each
# fatal, so that libFuzzer keeps the input that tripped it. Left to the asan preset, which runs the
# tests under all of -fsanitize=undefined: alignment, null (a SEGV under ASan anyway), object-size
# (nothing at -O0), vptr and function, pointer-overflow and the nonnull attributes; they nearly
# double the instrumented build's time (docs/development.md, "Build time").
set(VIGIL_FUZZ_UNDEFINED
    "signed-integer-overflow,float-cast-overflow,shift,integer-divide-by-zero,bounds,bool,enum,return,unreachable,builtin,vla-bound")
if(VIGIL_FUZZ)
  target_compile_options(vigil_sanitizers INTERFACE
    -fsanitize=fuzzer-no-link,address,${VIGIL_FUZZ_UNDEFINED}
    -fno-sanitize-recover=${VIGIL_FUZZ_UNDEFINED} -fno-omit-frame-pointer)
  target_link_options(vigil_sanitizers INTERFACE -fsanitize=address,${VIGIL_FUZZ_UNDEFINED})
endif()

add_library(vigil_flags INTERFACE)
target_link_libraries(vigil_flags INTERFACE vigil_warnings vigil_sanitizers)

# vigil_module(NAME SOURCES... [DEPS ...]) declares the library of one module, src/vigil/NAME.
function(vigil_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(vigil_${name} STATIC ${ARG_SOURCES})
  target_include_directories(vigil_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(vigil_${name} PUBLIC ${ARG_DEPS} PRIVATE vigil_flags ${ARG_PRIVATE_DEPS})
endfunction()

# vigil_test(NAME SOURCES... DEPS ... [LABELS ...] [SERIAL]) declares a GoogleTest program
# registered with CTest. SERIAL: its tests run with nothing else beside them (ctest's RUN_SERIAL),
# for tests that measure the machine itself, whose figures another test's load would move.
function(vigil_test name)
  if(NOT VIGIL_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "SERIAL" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} vigil_testing GTest::gtest GTest::gtest_main GTest::gmock vigil_flags)
  target_compile_definitions(${name} PRIVATE VIGIL_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # The tests' own code at -Og in the dev preset: it compiles in about half the time of -O2
  # (GoogleTest's macros are most of it) and debugs as well; the code under test keeps -O2.
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo>:-Og>)
  set(label unit)
  if(ARG_LABELS)
    set(label ${ARG_LABELS})
  endif()
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 30 PROPERTIES LABELS ${label} RUN_SERIAL ${serial})
endfunction()
