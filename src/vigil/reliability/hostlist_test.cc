#include "vigil/reliability/hostlist.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::reliability {
namespace {

Result<std::vector<std::string>> Expand(std::string_view list) {
  std::vector<std::string> names;
  VIGIL_RETURN_IF_ERROR(
      ExpandHostlist(list, [&](std::string_view name) { names.emplace_back(name); }));
  return names;
}

using Names = std::vector<std::string>;

TEST(ExpandHostlistTest, PlainNamesRangesAndPadding) {
  EXPECT_EQ(*Expand("login1"), Names({"login1"}));
  EXPECT_EQ(*Expand("a,b"), Names({"a", "b"}));
  EXPECT_EQ(*Expand("gpu[001-003,007]"), Names({"gpu001", "gpu002", "gpu003", "gpu007"}));
  EXPECT_EQ(*Expand("n[8-10]"), Names({"n8", "n9", "n10"}));
  EXPECT_EQ(*Expand("n[08-10]"), Names({"n08", "n09", "n10"}));
  EXPECT_EQ(*Expand("x[1-2],y3"), Names({"x1", "x2", "y3"}));
  EXPECT_EQ(*Expand("r[1-2]n[1-2]-ib"), Names({"r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib"}));
}

TEST(ExpandHostlistTest, RejectsMalformedLists) {
  for (const char* bad : {"", "a,,b", "n[1-", "n1]", "n[]", "n[3-1]", "n[a-b]", "n[1-2-3]",
                          "n[[1]]", "n[0-99999999]", "a[0-1023]b[0-1023]c[0-3]", "a,"}) {
    const auto r = Expand(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("bad hostlist"), std::string::npos) << bad;
  }
}

TEST(CompressHostlistTest, RoundTrips) {
  const Names names = {"node0001", "node0002", "node0003", "node0007",
                       "login",    "node0009", "gpu1",     "gpu2"};
  const std::string compact = CompressHostlist(names);
  EXPECT_EQ(compact, "node[0001-0003,0007],login,node0009,gpu[1-2]");
  EXPECT_EQ(*Expand(compact), names);
  EXPECT_EQ(CompressHostlist(Names{}), "");
  EXPECT_EQ(CompressHostlist(Names{"a"}), "a");
}

}  // namespace
}  // namespace vigil::reliability
