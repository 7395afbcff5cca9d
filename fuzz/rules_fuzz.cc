// SuperBench rule files come from users: any YAML either loads or is rejected with the rule's
// name and line, and whatever loads diagnoses a small fleet and writes every report format.
#include <cstdint>
#include <string>

#include "vigil/results/summary.h"
#include "vigil/superbench/diagnose.h"
#include "vigil/superbench/superbench_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<std::vector<vigil::superbench::Rule>> rules =
      vigil::superbench::ParseRules(text, "fuzz.yaml");
  if (!rules.ok()) return 0;
  static const vigil::FleetTable table = *vigil::ParseFleetTable(
      "{\"node\": \"a\", \"m/x:0\": 1, \"m/x:1\": 2, \"m/return_code\": 0}\n"
      "{\"node\": \"b\", \"m/x:0\": 3, \"n:run0/y\": null, \"m/return_code\": 1}\n",
      "fleet", 1);
  const vigil::superbench::Baseline baseline = {{"m/x", 2.0}, {"n:run0/y", 1.0}};
  for (bool strict : {false, true}) {
    vigil::superbench::DiagnoseOptions o;
    o.strict_missing = strict;
    o.threads = 1;
    vigil::Result<vigil::superbench::Diagnosis> d =
        vigil::superbench::Diagnose(table, *rules, baseline, o);
    if (!d.ok()) continue;
    for (auto format :
         {vigil::superbench::ReportFormat::kJson, vigil::superbench::ReportFormat::kJsonl,
          vigil::superbench::ReportFormat::kMd, vigil::superbench::ReportFormat::kHtml}) {
      for (bool all : {false, true}) {
        vigil::superbench::ReportOptions r;
        r.format = format;
        r.output_all = all;
        vigil::superbench::FormatDiagnosisReport(table, *d, r);
      }
    }
  }
  (void)vigil::superbench::GenerateBaseline(table, &*rules);
  return 0;
}
