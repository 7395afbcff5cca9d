#include "vigil/core/json.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(JsonTest, ParsesAndKeepsKeyOrder) {
  Result<Json> j = ParseJson(R"({"z": 1, "a": 2.5})", "t");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->begin().key(), "z");
  EXPECT_EQ((*j)["a"].get<double>(), 2.5);
}

TEST(JsonTest, ErrorNamesSourceLineAndColumn) {
  Result<Json> j = ParseJson("{\"a\": 1,\n  ,}", "results.json");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(j.status().message().rfind("results.json:2:3: ", 0), 0u) << j.status().message();
}

TEST(JsonTest, FirstLineOffsetsLineNumbers) {
  Result<Json> j = ParseJson("{oops}", "fleet.jsonl", 17);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message().rfind("fleet.jsonl:17:2: ", 0), 0u) << j.status().message();
}

TEST(JsonTest, PythonNonFiniteBecomeNull) {
  Result<Json> j = ParseJson(R"({"a": NaN, "b": -Infinity, "c": Infinity, "s": "NaN"})", "t");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_TRUE((*j)["a"].is_null());
  EXPECT_TRUE((*j)["b"].is_null());
  EXPECT_TRUE((*j)["c"].is_null());
  EXPECT_EQ((*j)["s"], "NaN");  // inside a string it is text
}

TEST(JsonTest, EscapedQuoteDoesNotEndString) {
  Result<Json> j = ParseJson(R"({"a\"NaN": 1})", "t");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["a\"NaN"], 1);
}

TEST(JsonTest, EmptyAndTruncatedInputFail) {
  EXPECT_FALSE(ParseJson("", "t").ok());
  EXPECT_FALSE(ParseJson("{\"a\": [1, 2", "t").ok());
  Result<Json> bare = ParseJson("NaN", "t");  // a bare NaN is null, as Python would read it
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->is_null());
}

TEST(JsonTest, DumpNeverThrowsOnInvalidUtf8) {
  const Json j{{"node", std::string("bad\xdd")}};
  EXPECT_EQ(DumpJson(j), "{\"node\":\"bad\xef\xbf\xbd\"}");
  EXPECT_EQ(DumpJson(Json::array({1}), 2), "[\n  1\n]");
}

TEST(JsonTest, PythonNonFiniteAsNullLeavesStringsAndReportsNothingToDo) {
  EXPECT_EQ(PythonNonFiniteAsNull(R"([NaN, -Infinity, "NaN \" Infinity", Infinity])"),
            R"([null, null, "NaN \" Infinity", null])");
  EXPECT_EQ(PythonNonFiniteAsNull(R"({"a": -1, "N": "I"})"), "");  // nothing to replace
}

TEST(JsonTest, AppendJsonStringWritesWhatDumpJsonWrites) {
  for (const std::string& text : {std::string("gpu-017/H100"), std::string("quote \" and \\"),
                                  std::string("tab\tnew\nline\x01\x7f"), std::string("caf\xc3\xa9"),
                                  std::string("bad\xdd")}) {
    std::string out = "x";
    AppendJsonString(out, text);
    EXPECT_EQ(out, "x" + DumpJson(Json(text))) << text;
  }
  std::string ascii;
  AppendJsonString(ascii, "caf\xc3\xa9", /*ensure_ascii=*/true);
  EXPECT_EQ(ascii, R"("caf\u00e9")");
}

}  // namespace
}  // namespace vigil
