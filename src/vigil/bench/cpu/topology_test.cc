#include "vigil/bench/cpu/topology.h"

#include <gtest/gtest.h>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

TEST(TopologyTest, ParsesCpuLists) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList("5"), (std::vector<int>{5}));
  EXPECT_TRUE(ParseCpuList("\n")->empty());
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "0-99999999"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

// Found by fuzzing: quoting a malformed list with a byte that is not UTF-8 aborted in fmt.
TEST(TopologyTest, MalformedListWithInvalidUtf8IsAnError) {
  Result<std::vector<int>> r = ParseCpuList(std::string_view("0-1,2-5\n\xdd", 9));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "malformed CPU list \"0-1,2-5\\n\\xdd\"");
}

class FakeSysfs : public ::testing::Test {
 protected:
  void Write(const std::string& rel, const std::string& text) { tmp_.Write(rel, text); }
  void Cache(int cpu, int index, int level, const std::string& type, const std::string& size,
             const std::string& shared) {
    const std::string d = "devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                          std::to_string(index) + "/";
    Write(d + "level", std::to_string(level) + "\n");
    Write(d + "type", type + "\n");
    Write(d + "size", size + "\n");
    Write(d + "shared_cpu_list", shared + "\n");
  }
  vigil::testing::TempDir tmp_;
  const std::string root_ = tmp_.path();
};

TEST_F(FakeSysfs, TwoNodesTwoL3) {
  Write("devices/system/cpu/online", "0-3\n");
  Write("devices/system/node/node0/cpulist", "0-1\n");
  Write("devices/system/node/node1/cpulist", "2-3\n");
  Write("devices/system/node/possible", "0-1\n");  // not a node directory
  for (int cpu = 0; cpu < 4; ++cpu) {
    Cache(cpu, 0, 1, "Data", "48K", std::to_string(cpu));
    Cache(cpu, 1, 1, "Instruction", "32K", std::to_string(cpu));
    Cache(cpu, 2, 3, "Unified", "32768K", cpu < 2 ? "0-1" : "2-3");
  }
  Result<CpuTopology> t = ReadCpuTopology(root_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->nodes.size(), 2u);
  EXPECT_EQ(t->nodes[1].id, 1);
  EXPECT_EQ(t->nodes[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(t->llc_bytes_total, 2u * 32768 * 1024);  // two L3 slices, each listed twice
  EXPECT_EQ(t->AllCpus(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t->FirstCpus(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t->FirstCpus(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t->FirstCpus(9), (std::vector<int>{0, 1, 2, 3}));
}

TEST_F(FakeSysfs, NoNodeDirectoryMeansOneNode) {
  Write("devices/system/cpu/online", "0-2\n");
  Result<CpuTopology> t = ReadCpuTopology(root_);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->nodes.size(), 1u);
  EXPECT_EQ(t->nodes[0].cpus, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t->llc_bytes_total, 0u);
}

TEST(TopologyTest, ThisMachineHasCpus) {
  Result<CpuTopology> t = ReadCpuTopology();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(t->AllCpus().empty());
}

// A range ending at INT_MAX looped forever (++c overflowed); a long list of ranges allocated
// without limit.
TEST(CpuListTest, NumbersAndEntriesAreBounded) {
  ASSERT_TRUE(ParseCpuList("1048575").ok());
  EXPECT_EQ(ParseCpuList("2147483640-2147483647").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCpuList("1048576").status().message(),
            "CPU list \"1048576\": 1048576 is outside [0, 1048575]");
  std::string many;
  for (int i = 0; i < 3; ++i) many += "0-30000,";
  many += "0";
  const auto r = ParseCpuList(many);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 65536 entries"), std::string::npos);
  EXPECT_EQ(ParseCpuList("0-30000,0-30000")->size(), 60002u);
}

}  // namespace
}  // namespace vigil
