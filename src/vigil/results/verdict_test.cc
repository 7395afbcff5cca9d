#include "vigil/results/verdict.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(VerdictTest, NamesParseBack) {
  for (const Verdict v : {Verdict::kHealthy, Verdict::kDefective, Verdict::kUnjudged}) {
    const Result<Verdict> back = ParseVerdict(VerdictName(v));
    ASSERT_TRUE(back.ok()) << VerdictName(v);
    EXPECT_EQ(*back, v);
  }
  EXPECT_EQ(VerdictName(Verdict::kHealthy), "healthy");
  EXPECT_EQ(VerdictName(Verdict::kDefective), "defective");
  EXPECT_EQ(VerdictName(Verdict::kUnjudged), "unjudged");
}

TEST(VerdictTest, OtherTextIsRefusedByName) {
  const Result<Verdict> r = ParseVerdict("Healthy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "expected healthy, defective or unjudged, got \"Healthy\"");
  EXPECT_FALSE(ParseVerdict("").ok());
}

}  // namespace
}  // namespace vigil
