#include "vigil/learned/criteria.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/testing/healthy_fleet.h"

namespace vigil::learned {
namespace {

using eval::FleetGenOptions;
using eval::GeneratedFleet;
using eval::GenerateFleet;
using vigil::testing::TableOf;

// A part's pool spans benchmarks: judging a node that ran only some of them keeps it only when
// it ran all.
TEST(CriteriaTest, APartsPoolIsKeptOnlyWithEveryBenchmarkItPools) {
  ComponentModel hbm;
  hbm.benchmark = "gpu-copy-bw+mem-bw";
  hbm.part = "HBM";
  ComponentModel launch;
  launch.benchmark = "kernel-launch";
  LearnedCriteria c;
  c.classes.push_back(ClassModel{"", 10, {}, {hbm, launch}});
  EXPECT_EQ(RestrictToBenchmarks(c, {"mem-bw", "gpu-copy-bw"}).classes[0].components.size(), 1u);
  EXPECT_EQ(RestrictToBenchmarks(c, {"mem-bw", "kernel-launch"}).classes[0].components.size(), 1u);
  EXPECT_EQ(RestrictToBenchmarks(c, {"gpu-copy-bw", "mem-bw", "kernel-launch"})
                .classes[0]
                .components.size(),
            2u);
}

TEST(CriteriaTest, CriteriaRoundTripAndVersionCheck) {
  FleetGenOptions o;
  o.nodes = 100;
  const GeneratedFleet g = *GenerateFleet(o);
  const FleetTable t = TableOf(g);
  const LearnedCriteria c = *Learn(t, LearnOptions{});
  const std::string text = DumpJson(CriteriaToJson(c));
  Result<LearnedCriteria> back = CriteriaFromJson(text, "c.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(CriteriaToJson(*back)), text);
  // Same verdicts from the file as from memory, for any thread count.
  const auto a = Judge(t, c, 1);
  const auto b = Judge(t, *back, 3);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].findings.size(), b[i].findings.size());

  // Whatever the budget, what Learn writes reads back (a tiny one: limits of 1e100 sigmas).
  LearnOptions tiny;
  tiny.budget = 1e-100;
  const std::string generous = DumpJson(CriteriaToJson(*Learn(t, tiny)));
  ASSERT_TRUE(CriteriaFromJson(generous, "c.json").ok())
      << CriteriaFromJson(generous, "c.json").status().ToString();

  Result<LearnedCriteria> other = CriteriaFromJson("{\"schema\": \"vigil.criteria/9\"}", "c.json");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message().rfind("c.json: criteria of schema \"vigil.criteria/9\"", 0),
            0u);
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/1\"}", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/2\"}", "c.json").ok());
  // /3 pooled each benchmark's components of every metric count under one limit.
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/3\"}", "c.json").ok());
  // /4 read the balance inside the node against a median that held the value judged.
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/4\"}", "c.json").ok());
  // /5 pooled a component of many metrics by their quarter-trimmed mean alone.
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/5\"}", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("[]", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/6\", \"budget\": \"x\","
                                " \"resolution\": 0, \"classes\": []}",
                                "c.json")
                   .ok());
}

// A criteria file's numbers keep to what `vigil learn` writes: nodes and samples are whole counts
// (a negative one wrapped to 2^64 as a size_t), spreads positive, everything finite.
TEST(CriteriaTest, CriteriaNumbersOutsideTheirRangesAreNamed) {
  FleetGenOptions o;
  o.nodes = 60;
  const Json good = CriteriaToJson(*Learn(TableOf(*GenerateFleet(o)), LearnOptions{}));
  const std::string family = good["classes"][0]["families"][0]["family"];
  const std::string hardware = good["classes"][0]["hardware"];
  const std::string pool = good["classes"][0]["components"][0]["benchmark"];
  struct Case {
    std::string pointer;
    Json value;
    std::string message;
  };
  const Case cases[] = {
      {"/budget", 0, "c.json: budget: 0 is outside (0, 1]"},
      {"/resolution", 2, "c.json: resolution: 2 is outside [0, 1]"},
      {"/classes/0/nodes", -1,
       "c.json: class \"" + hardware + "\": nodes: -1 is outside [0, 1099511627776]"},
      {"/classes/0/nodes", 2.5,
       "c.json: class \"" + hardware + "\": nodes: expected a whole number"},
      {"/classes/0/families/0/modes/0/spread", 0,
       "c.json: family " + family + ": spread: 0 is outside (0, 1e+100]"},
      {"/classes/0/families/0/modes/0/centre", -1e300,
       "c.json: family " + family + ": centre: -1e+300 is outside [-1e+100, 1e+100]"},
      {"/classes/0/families/0/modes", Json::array(), "c.json: family " + family + ": modes: none"},
      {"/classes/0/families/0/limit", -1,
       "c.json: family " + family + ": limit: -1 is outside [0, 1e+100]"},
      {"/classes/0/families/0/samples", "7",
       "c.json: family " + family + ": samples: expected a number"},
      {"/classes/0/components/0/pooling", 3,
       "c.json: component model " + pool +
           ": pooling: expected trimmed_or_held, mean or but_worst"},
      {"/classes/0/components/0/pooling", "trimmed",
       "c.json: component model " + pool +
           ": pooling: \"trimmed\" is not trimmed_or_held, mean or but_worst"},
  };
  for (const Case& c : cases) {
    Json j = good;
    j[Json::json_pointer(c.pointer)] = c.value;
    Result<LearnedCriteria> r = CriteriaFromJson(DumpJson(j), "c.json");
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_EQ(r.status().message(), c.message);
  }
}

}  // namespace
}  // namespace vigil::learned
