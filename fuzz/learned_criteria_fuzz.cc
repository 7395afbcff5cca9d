// Criteria files and truth files are read back from disk: any text is accepted or rejected with
// a message, and accepted criteria judge a small fleet, and say what they find part by part
// (ReachOf, and its table and note as `vigil learn` prints them), without crashing.
#include <cstdint>
#include <string>
#include <vector>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/reach.h"
#include "vigil/results/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)vigil::eval::ParseTruth(text, "truth.csv");
  vigil::Result<vigil::learned::LearnedCriteria> c =
      vigil::learned::CriteriaFromJson(text, "criteria.json");
  if (!c.ok()) return 0;
  static const vigil::FleetTable table = *vigil::ParseFleetTable(
      "{\"node\": \"a\", \"hardware\": \"h\", \"g/flops:0\": 1, \"g/flops:1\": 2, "
      "\"g/return_code\": 0, \"ib/write_4096_bw:0\": 3, \"ib/write_8192_bw:0\": 4, "
      "\"gpu-health/ecc_uncorrected_volatile:0\": 1, \"gpu-health/power_w:0\": 300, "
      "\"mem-bw/d2d_bw:0\": 1100, \"gpu-copy-bw/gpu0_to_gpu0_by_sm_bw\": 1200, "
      "\"gpu-copy-bw/gpu0_to_gpu1_write_by_sm_bw\": 260, "
      "\"gpu-copy-bw/gpu1_to_gpu0_write_by_sm_bw\": 130}\n"
      "{\"node\": \"b\", \"g/flops:0\": 0, \"g/return_code\": 1, "
      "\"gpu-health/ecc_uncorrected_volatile:0\": 0}\n",
      "fleet", 1);
  vigil::learned::Judge(table, *c, 1);
  vigil::learned::Judge(table, vigil::learned::RestrictToBenchmarks(*c, {"g"}), 2);
  const std::vector<vigil::learned::Reach> reach = vigil::learned::ReachOf(*c, 1);
  (void)vigil::learned::RenderReach(reach);
  (void)vigil::learned::RenderBlindReach(reach);
  return 0;
}
