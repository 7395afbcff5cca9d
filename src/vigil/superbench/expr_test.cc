#include "vigil/superbench/expr.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil::superbench {
namespace {

EvalResult Eval(std::string_view text, double x) {
  Result<Criteria> c = Criteria::Parse(text);
  EXPECT_TRUE(c.ok()) << text << ": " << c.status().ToString();
  return c.ok() ? (*c)(x) : EvalResult{};
}

bool IsTrue(std::string_view text, double x) {
  const EvalResult r = Eval(text, x);
  EXPECT_EQ(r.error, EvalError::kNone) << text << ": " << r.message;
  EXPECT_EQ(r.kind, EvalResult::Kind::kBool) << text;
  return r.truthy();
}

// Every criteria in SuperBench's fixtures and in Azure's published NDv4 rules.
TEST(CriteriaTest, RuleFileCriteria) {
  EXPECT_TRUE(IsTrue("lambda x:x>0.05", 0.06));
  EXPECT_FALSE(IsTrue("lambda x:x>0.05", 0.05));
  EXPECT_TRUE(IsTrue("lambda x:x<-0.05", -0.051));
  EXPECT_FALSE(IsTrue("lambda x:x<-0.1", -0.1));
  EXPECT_TRUE(IsTrue("lambda x:x!=0", -1));
  EXPECT_FALSE(IsTrue("lambda x:x>0", 0));
  EXPECT_TRUE(IsTrue("lambda x: x < 0.9 or x > 1.1", 1.2));
  EXPECT_FALSE(IsTrue("lambda x: not (x < 0.9 or x > 1.1)", 1.2));
  EXPECT_TRUE(IsTrue("lambda x: True if x >= 2 else False", 2));
  EXPECT_TRUE(IsTrue("lambda x: 0 < x <= 1", 1));  // chained, as in Python
  EXPECT_FALSE(IsTrue("lambda x: 0 < x <= 1", 0));
  EXPECT_TRUE(IsTrue("lambda x: abs(x) > 0.1", -0.2));
  EXPECT_TRUE(IsTrue("lambda x: bool(max(x, 1) - min(x, 1))", 3));
  EXPECT_TRUE(IsTrue("lambda v: (v * 2 + 1) / 3 == 1", 1));
  EXPECT_TRUE(IsTrue("lambda x: 2 ** 3 ** 2 == 512 and 7 // 2 == 3 and -7 % 3 == 2", 0));
  EXPECT_TRUE(IsTrue("lambda x: x == 1e-3 and .5 == 0.5", 0.001));
}

TEST(CriteriaTest, NaNComparesFalse) {
  EXPECT_FALSE(IsTrue("lambda x:x>0", std::nan("")));
  EXPECT_FALSE(IsTrue("lambda x:x<0", std::nan("")));
  EXPECT_TRUE(IsTrue("lambda x:x!=x", std::nan("")));
}

// SuperBench requires criteria(0) to be a bool: a lambda that returns a number is a broken rule.
TEST(CriteriaTest, ResultKindFollowsPython) {
  EXPECT_EQ(Eval("lambda x: x", 0).kind, EvalResult::Kind::kNumber);
  EXPECT_EQ(Eval("lambda x: x and True", 0).kind, EvalResult::Kind::kNumber);  // returns x
  EXPECT_EQ(Eval("lambda x: x and True", 1).kind, EvalResult::Kind::kBool);
  EXPECT_EQ(Eval("lambda x: None", 1).kind, EvalResult::Kind::kOther);
}

TEST(CriteriaTest, RuntimeErrors) {
  EXPECT_EQ(Eval("lambda x: 1 / x > 0", 0).error, EvalError::kOther);
  EXPECT_EQ(Eval("lambda x: 1 % x > 0", 0).error, EvalError::kOther);
  EXPECT_EQ(Eval("lambda x: x < 'a'", 0).error, EvalError::kOther);
  EXPECT_EQ(Eval("lambda x: x['a'] > 0", 0).error, EvalError::kOther);
  EXPECT_EQ(Eval("lambda x: x == 'a'", 0).error, EvalError::kNone);  // == never raises
}

TEST(CriteriaTest, MultiRulesOverStoredLabels) {
  Labels labels;
  labels["rule1"] = StoredLabel{true, 0, {{"m/a:0", 10}, {"m/a:1", 23}, {"m/a:2", 22}}};
  labels["rule2"] = StoredLabel{false, 1, {}};
  labels["rule3"] = StoredLabel{false, 1, {}};
  const auto run = [&](std::string_view text) {
    Result<Criteria> c = Criteria::Parse(text);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return (*c)(labels);
  };
  EvalResult r =
      run("lambda label: bool(min(label[\"rule1\"].values())/max(label[\"rule1\"].values())<0.95)");
  EXPECT_EQ(r.kind, EvalResult::Kind::kBool);
  EXPECT_TRUE(r.truthy());
  r = run("lambda label:True if label[\"rule2\"]+label[\"rule3\"]>=2 else False");
  EXPECT_TRUE(r.truthy());
  r = run("lambda label: sum(label['rule1'].values()) == 55 and len(label['rule1']) == 3");
  EXPECT_TRUE(r.truthy());
  r = run("lambda label: label['rule1']['m/a:1'] == 23 and label['rule1'].values()[-1] == 22");
  EXPECT_TRUE(r.truthy());
  EXPECT_EQ(run("lambda label: label['nope'] > 0").error, EvalError::kKeyError);
  EXPECT_EQ(run("lambda label: label['rule1']['m/x'] > 0").error, EvalError::kKeyError);
  EXPECT_EQ(run("lambda label: min(label['rule2']) > 0").error, EvalError::kOther);
}

// Python's min/max keep the first item unless a later one compares smaller: NaN's place matters.
TEST(CriteriaTest, MinMaxWithNaNFollowPython) {
  Labels labels;
  const double nan = std::nan("");
  labels["r"] = StoredLabel{true, 0, {{"a", 10}, {"b", nan}, {"c", nan}}};
  Result<Criteria> c = Criteria::Parse(
      "lambda label: min(label['r'].values()) == 10 and max(label['r'].values()) == 10");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)(labels).truthy());
  labels["r"].values = {{"b", nan}, {"a", 10}};
  EXPECT_FALSE((*c)(labels).truthy());
}

TEST(CriteriaTest, RejectsAnythingElseWithItsPosition) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"x>0", "position 1: criteria must start with 'lambda'"},
      {"lambda x: __import__('os').system('rm -rf /')", "position 11: unknown name"},
      {"lambda x: x.real > 0", "position 13: only the .values() method"},
      {"lambda x, y: x", "position 9: the lambda must take exactly one parameter"},
      {"lambda x: open('f')", "position 11: unknown name"},
      {"lambda x: (lambda y: y)(x)", "position 12: unexpected 'lambda'"},
      {"lambda x: x > 0 if x", "position 21: expected 'else'"},
      {"lambda x: x >", "position 14: unexpected end of criteria"},
      {"lambda x: x > 0)", "position 16: unexpected ')'"},
      {"lambda x: x @ 2", "position 13: unexpected character"},
      {"lambda x: 1x", "position 11: bad number"},
      {"lambda x: 'abc", "position 11: unterminated string"},
      {"lambda x: len(x, x)", "position 11: len() takes one argument"},
      {"lambda x: [x]", "position 11: unexpected '['"},
      {"lambda x: x if", "position 15: unexpected end"},
  };
  for (const Case& c : cases) {
    Result<Criteria> r = Criteria::Parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message().rfind(c.message, 0), 0u)
        << c.text << " -> " << r.status().message();
  }
}

TEST(CriteriaTest, DeepOrLongInputIsRejectedNotACrash) {
  std::string deep = "lambda x: " + std::string(500, '(') + "x" + std::string(500, ')');
  EXPECT_FALSE(Criteria::Parse(deep).ok());
  std::string nots = "lambda x: ";
  for (int i = 0; i < 200; ++i) nots += "not ";
  EXPECT_FALSE(Criteria::Parse(nots + "x").ok());
  std::string sum = "lambda x: x";
  for (int i = 0; i < 600; ++i) sum += "+1";
  EXPECT_FALSE(Criteria::Parse(sum + " > 0").ok());
}

TEST(CriteriaTest, LiteralsBeyondAnyMetricValueAreRefused) {
  EXPECT_TRUE(Criteria::Parse("lambda x: x > 1e100").ok());
  const Result<Criteria> r = Criteria::Parse("lambda x: x > 1e300");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "position 15: number 1e300 is outside [-1e+100, 1e+100]");
}

}  // namespace
}  // namespace vigil::superbench
