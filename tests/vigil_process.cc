#include "vigil_process.h"

#include <gtest/gtest.h>

#include <chrono>

namespace vigil::testing {
namespace {

ChildOptions Options(const std::vector<std::string>& args, const std::string& program) {
  ChildOptions o;
  o.argv.push_back(program);
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.capture = true;
  o.grace = std::chrono::milliseconds(0);  // a test that left it running is over
  return o;
}

}  // namespace

VigilProcess::VigilProcess(const std::vector<std::string>& args, const std::string& program)
    : child_(Options(args, program)) {}

ProcessResult RunVigil(const std::vector<std::string>& args) { return VigilProcess(args).Wait(); }

ProcessResult RunProgram(const std::string& program, const std::vector<std::string>& args) {
  return VigilProcess(args, program).Wait();
}

Json JsonOf(const ProcessResult& r) {
  Result<Json> j = ParseJson(r.out, "stdout");
  EXPECT_TRUE(j.ok()) << r.out << r.err;
  return j.ok() ? *j : Json();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace vigil::testing
