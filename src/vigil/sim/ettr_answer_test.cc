#include "vigil/sim/ettr_answer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace vigil::sim {
namespace {

using reliability::EttrParams;

// Inside the domain the answer is the formula's, and nothing is simulated.
TEST(EttrAnswerTest, InsideTheDomainTheFormulaAnswers) {
  const auto rows = AnswerEttrBySize(EttrParams{}, {128});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const EttrAnswer& a = rows->front();
  EXPECT_TRUE(a.row.estimate.in_domain);
  EXPECT_FALSE(a.simulated.has_value());
  EXPECT_FALSE(a.simulated_at_optimal.has_value());
  EXPECT_DOUBLE_EQ(a.Ettr(), a.row.estimate.ettr);
}

// Outside it the simulated job answers: docs/reliability.md's table (u0 10 min, dt 1 h, w_cp
// 1 min) has 0.668 at 2,048 nodes and 0.180 at 8,192, where the formula says -0.47.
TEST(EttrAnswerTest, OutsideTheDomainTheSimulationAnswers) {
  const auto rows = AnswerEttrBySize(EttrParams{}, {2048, 8192});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_TRUE((*rows)[0].simulated.has_value());
  EXPECT_NEAR((*rows)[0].Ettr(), 0.668, 0.01);
  EXPECT_LT((*rows)[1].row.estimate.ettr, 0);
  EXPECT_NEAR((*rows)[1].Ettr(), 0.180, 0.01);
  // The optimum's interval is shorter, but 8,192 nodes still lose too much there.
  EXPECT_TRUE((*rows)[1].simulated_at_optimal.has_value());
  EXPECT_GT((*rows)[1].EttrAtOptimal(), 0);
}

// The same job, the same answer; and a job with a million nodes is answered (how fast:
// docs/benchmarks.md, "model ettr at a million nodes", not a timed test).
TEST(EttrAnswerTest, DeterministicAtAnySize) {
  const auto a = AnswerEttrBySize(EttrParams{}, {4096});
  const auto b = AnswerEttrBySize(EttrParams{}, {4096});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a->front().simulated, *b->front().simulated);
  const auto huge = AnswerEttrBySize(EttrParams{}, {1048576});
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_GE(huge->front().Ettr(), 0);
}

TEST(EttrAnswerTest, ErrorsNameTheFlag) {
  EttrParams p;
  p.interval_s = 0;
  const auto rows = AnswerEttrBySize(p, {8});
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("--interval"), std::string::npos);
}

// The sweep never prints a negative ETTR, and says which rows the simulation answered.
TEST(EttrAnswerTest, SweepTableSaysWhereTheSimulationAnswered) {
  const auto rows = AnswerEttrBySize(EttrParams{}, {128, 8192});
  ASSERT_TRUE(rows.ok());
  const std::string table = EttrSweepTable(*rows, 8);
  std::istringstream in(table);
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_NE(header.find("ETTR_FROM"), std::string::npos) << table;
  EXPECT_NE(first.find("formula"), std::string::npos) << table;
  EXPECT_EQ(first.find("simulation"), std::string::npos) << table;
  EXPECT_NE(second.find("simulation (formula: -0.4"), std::string::npos) << table;
  // Columns up to ETTR_FROM hold no negative figure; the formula's own, in it, may be.
  EXPECT_EQ(second.substr(0, second.find("simulation")).find(" -"), std::string::npos) << table;
  EXPECT_NE(table.find("simulated job's mean"), std::string::npos) << table;
  // One job outside the domain: the formula's value is marked, the simulated one answers.
  const std::string one = EttrTable((*rows)[1]);
  EXPECT_NE(one.find("ETTR by the formula"), std::string::npos) << one;
  EXPECT_NE(one.find("not trusted"), std::string::npos) << one;
  EXPECT_NE(one.find("expected ETTR        0.1"), std::string::npos) << one;
}

// The plot holds a point per size for the answer, beside the answer at the optimal interval.
TEST(EttrAnswerTest, SweepPlotHoldsEveryRow) {
  const auto rows = AnswerEttrBySize(EttrParams{}, {128, 256, 512, 1024, 2048});
  ASSERT_TRUE(rows.ok());
  const std::string svg = EttrSweepPlot(*rows, 8, "r_f = 6.5");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find(">Expected ETTR by job size</text>"), std::string::npos);
  EXPECT_NE(svg.find(">r_f = 6.5</text>"), std::string::npos);
  EXPECT_NE(svg.find(">expected ETTR</text>"), std::string::npos);
  EXPECT_NE(svg.find(">ETTR at optimal dt</text>"), std::string::npos);
  const size_t line = svg.find("<polyline points=\"");
  ASSERT_NE(line, std::string::npos);
  const std::string points = svg.substr(line, svg.find("/>", line) - line);
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 5) << points;
  EXPECT_NE(svg.find("<title>16384, "), std::string::npos) << svg;  // 2,048 nodes of 8 GPUs
}

}  // namespace
}  // namespace vigil::sim
