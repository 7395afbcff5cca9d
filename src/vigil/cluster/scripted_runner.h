// A CommandRunner for tests: answers each call with the next scripted output and keeps what it
// was asked. Header-only; not thread-safe.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "vigil/cluster/command.h"

namespace vigil::cluster {

class ScriptedRunner final : public CommandRunner {
 public:
  std::deque<Result<CommandOutput>> answers;
  std::vector<CommandSpec> calls;

  // Queues an answer: what the program printed and its exit code.
  void Add(std::string out, int exit_code = 0, std::string err = "") {
    answers.push_back(CommandOutput{exit_code, std::move(out), std::move(err)});
  }

  Result<CommandOutput> Run(const CommandSpec& spec) override {
    calls.push_back(spec);
    if (answers.empty()) return Status::Internal("unscripted call");
    Result<CommandOutput> next = std::move(answers.front());
    answers.pop_front();
    return next;
  }
};

}  // namespace vigil::cluster
