#include "vigil/results/component.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ComponentTest, KindAndIndexOrPair) {
  EXPECT_EQ(ParseComponent("GPU 3"), (ComponentId{"GPU", ComponentIndex{3, std::nullopt}}));
  EXPECT_EQ(ParseComponent("link 0-3"), (ComponentId{"link", ComponentIndex{0, 3}}));
  EXPECT_EQ(ComponentName({"NIC", ComponentIndex{5, std::nullopt}}), "NIC 5");
  EXPECT_EQ(ComponentName({"NVLink", ComponentIndex{0, 4}}), "NVLink 0-4");
}

TEST(ComponentTest, TextWithoutAnIndexIsAKindAlone) {
  for (const char* text : {"NVLink", "gemm-flops", "disk nvme0n1", "foo:2", "GPU 03", "GPU 1-2-3",
                           "GPU -1", "GPU ", " 3", "", "ib-traffic"}) {
    const ComponentId c = ParseComponent(text);
    EXPECT_EQ(c.kind, text);
    EXPECT_FALSE(c.index.has_value()) << text;
  }
}

TEST(ComponentTest, NamesParseBackToThemselves) {
  for (const char* text : {"GPU 3", "link 0-3", "NVLink", "PCIe 12", "disk nvme0n1", "GPU 03",
                           "HBM 7", "x 99999999999"}) {
    EXPECT_EQ(ComponentName(ParseComponent(text)), text);
  }
}

}  // namespace
}  // namespace vigil
