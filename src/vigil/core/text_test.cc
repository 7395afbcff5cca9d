#include "vigil/core/text.h"

#include <gtest/gtest.h>

#include <vector>

namespace vigil {
namespace {

TEST(TextTest, QuotesAndEscapes) {
  EXPECT_EQ(Quote("gpu-gemm/bf16"), "\"gpu-gemm/bf16\"");
  EXPECT_EQ(Quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Quote("x\ny\tz"), "\"x\\ny\\tz\"");
  EXPECT_EQ(Quote(std::string_view("\x01\xdd\x7f", 3)), "\"\\x01\\xdd\\x7f\"");
  EXPECT_EQ(Quote(""), "\"\"");
}

TEST(TextTest, TrimsBothEnds) {
  EXPECT_EQ(Trim("  32768K\n"), "32768K");
  EXPECT_EQ(Trim("\t a b \r\n"), "a b");
  EXPECT_EQ(Trim(" \n\t"), "");
  EXPECT_EQ(Trim(""), "");
}

TEST(TextTest, APlainWordHasOnlyLettersDigitsAndTheGivenPunctuation) {
  EXPECT_TRUE(IsPlainWord("gpu-017", "-"));
  EXPECT_TRUE(IsPlainWord("Node_3.b", "_."));
  EXPECT_FALSE(IsPlainWord("", "-"));
  EXPECT_FALSE(IsPlainWord("gpu-[001-004]", "-"));
  EXPECT_FALSE(IsPlainWord("a b", "-"));
  EXPECT_FALSE(IsPlainWord("x$(id)", "-"));
  EXPECT_FALSE(IsPlainWord("caf\xc3\xa9", "-"));  // bytes outside ASCII
}

TEST(TextTest, WordsAreSeparatedByRunsOfBlanks) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(Words("  a\tb  \t c\r"), (V{"a", "b", "c"}));
  EXPECT_EQ(Words("one"), (V{"one"}));
  EXPECT_EQ(Words(" \t\r "), V{});
  EXPECT_EQ(Words(""), V{});
}

TEST(TextTest, SplitsKeepingEmptyFields) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(Split("a,b,,c", ','), (V{"a", "b", "", "c"}));
  EXPECT_EQ(Split("", ','), (V{""}));
  EXPECT_EQ(Split("a,", ','), (V{"a", ""}));
  EXPECT_EQ(Split(" a , b", ','), (V{" a ", " b"}));  // untrimmed
  EXPECT_EQ(Split("x=1;y=2", ';'), (V{"x=1", "y=2"}));
  size_t seen = 0;
  EXPECT_EQ(ForEachField("p,q,r", ',',
                         [&](size_t i, std::string_view f) {
                           EXPECT_EQ(f.size(), 1u);
                           seen += i;
                         }),
            3u);
  EXPECT_EQ(seen, 0u + 1 + 2);
}

TEST(TextTest, HtmlEscapeQuotesOnlyWhenAsked) {
  EXPECT_EQ(HtmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(HtmlEscape("a<b>&\"'", /*quotes=*/false), "a&lt;b&gt;&amp;\"'");
}

}  // namespace
}  // namespace vigil
