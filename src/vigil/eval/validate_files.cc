#include "vigil/eval/validate_files.h"

#include <utility>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/fleet_files.h"

namespace vigil::eval {

Result<Validation> ValidateFiles(const ValidateRequest& request, Env& env) {
  VIGIL_ASSIGN_OR_RETURN(const learned::LearnedCriteria criteria,
                         learned::ReadCriteria(request.criteria, env));
  std::vector<PlantedDefect> truth;
  if (!request.truth.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, env.ReadFile(request.truth));
    VIGIL_ASSIGN_OR_RETURN(truth, ParseTruth(text, request.truth));
  }
  Validation v;
  VIGIL_ASSIGN_OR_RETURN(v.table, ReadFleetFiles(request.data, env));
  v.verdicts = learned::Judge(v.table, criteria);
  for (const learned::NodeFindings& n : v.verdicts) v.defective += n.defective ? 1 : 0;
  if (!request.truth.empty()) {
    v.learned = ScoreFindings(FoundByLearned(v.table, v.verdicts), truth);
    v.superbench = ScoreFindings(FoundBySuperBenchStyle(v.table), truth);
  }
  return v;
}

}  // namespace vigil::eval
