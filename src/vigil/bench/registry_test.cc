#include "vigil/bench/registry.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

class Named : public Benchmark {
 public:
  Named(std::string name, bool quick, bool health = false)
      : name_(std::move(name)), quick_(quick), health_(health) {}
  std::string_view name() const override { return name_; }
  std::string_view component() const override { return "cpu"; }
  std::string_view description() const override { return "test"; }
  bool in_quick_suite() const override { return quick_; }
  bool in_health_suite() const override { return health_; }
  double time_limit_s(Suite) const override { return 1; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }
  Result<std::vector<Metric>> Run(const BenchContext&) const override {
    return std::vector<Metric>{};
  }

 private:
  std::string name_;
  bool quick_;
  bool health_;
};

Registry ThreeBenchmarks() {
  Registry r;
  r.Add(std::make_unique<Named>("a", true));
  r.Add(std::make_unique<Named>("b", false));
  r.Add(std::make_unique<Named>("c", true, true));
  return r;
}

std::vector<std::string_view> Names(const std::vector<const Benchmark*>& v) {
  std::vector<std::string_view> out;
  for (const Benchmark* b : v) out.push_back(b->name());
  return out;
}

TEST(RegistryTest, SuitesSelect) {
  Registry r = ThreeBenchmarks();
  EXPECT_EQ(Names(*r.Select(Suite::kQuick, {})), (std::vector<std::string_view>{"a", "c"}));
  EXPECT_EQ(Names(*r.Select(Suite::kFull, {})), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(Names(*r.Select(Suite::kHealth, {})), (std::vector<std::string_view>{"c"}));
}

TEST(RegistryTest, NamesSelectInRegistryOrder) {
  Registry r = ThreeBenchmarks();
  EXPECT_EQ(Names(*r.Select(Suite::kQuick, {"c", "b"})), (std::vector<std::string_view>{"b", "c"}));
}

TEST(RegistryTest, UnknownNameListsValidOnes) {
  Registry r = ThreeBenchmarks();
  auto sel = r.Select(Suite::kQuick, {"a", "zzz"});
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sel.status().message(), "unknown benchmark \"zzz\"; valid names: a, b, c");
}

TEST(RegistryTest, BuiltinHasTheHostSuite) {
  Registry r = BuiltinRegistry();
  for (const char* n : {"cpu-stream", "cpu-latency", "cpu-flops", "disk"}) {
    const Benchmark* b = r.Find(n);
    ASSERT_NE(b, nullptr) << n;
    EXPECT_TRUE(b->in_quick_suite());
    EXPECT_FALSE(b->description().empty());
    // Every default parses, in both suites.
    for (const ParamSpec& p : b->params()) {
      EXPECT_TRUE(ParseParamValue(p.kind, p.quick_default).ok()) << n << "." << p.name;
      EXPECT_TRUE(ParseParamValue(p.kind, p.full_default).ok()) << n << "." << p.name;
    }
  }
  EXPECT_EQ(r.Find("nope"), nullptr);
}

}  // namespace
}  // namespace vigil
