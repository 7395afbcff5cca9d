// The criteria of SuperBench rule files are Python lambdas, such as
//   lambda x:x<-0.05
//   lambda label: bool(min(label["rule1"].values())/max(label["rule1"].values())<0.95)
// SuperBench runs them with eval(). Vigil never runs code from a file: this is a small expression
// language that parses the subset rule files use, with Python's semantics, and rejects anything
// else with its position.
//
// Grammar (Python precedence):
//   criteria := 'lambda' NAME ':' expr
//   expr     := or ['if' or 'else' expr]
//   or       := and ('or' and)*          and := not ('and' not)*      not := 'not' not | cmp
//   cmp      := sum (('<'|'>'|'<='|'>='|'=='|'!=') sum)*      (chained, as in Python)
//   sum      := term (('+'|'-') term)*   term := unary (('*'|'/'|'//'|'%') unary)*
//   unary    := ('-'|'+') unary | power  power := primary ['**' unary]
//   primary  := atom ('[' expr ']' | '.values()')*
//   atom     := NUMBER | STRING | NAME | 'True' | 'False' | 'None' | '(' expr ')'
//             | ('min'|'max'|'sum'|'len'|'abs'|'bool') '(' expr (',' expr)* ')'
// NAME is the lambda's parameter, nothing else.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::superbench {

// What a stored rule leaves for multi_rules criteria: the number of metrics that violated it
// (a rule with criteria), or each metric's value (a rule without).
struct StoredLabel {
  bool is_map = false;
  double count = 0;
  std::vector<std::pair<std::string, double>> values;  // metric -> value, when is_map
};
using Labels = std::map<std::string, StoredLabel, std::less<>>;

// Why an evaluation failed, as Python would raise it. SuperBench treats KeyError in multi_rules
// criteria as a broken rule file and any other error as "the rule passes".
enum class EvalError { kNone, kKeyError, kOther };

struct EvalResult {
  enum class Kind { kBool, kNumber, kOther } kind = Kind::kOther;  // kOther: None, a list...
  double number = 0;  // the value for kNumber, 0 or 1 for kBool
  EvalError error = EvalError::kNone;
  std::string message;  // what went wrong, when error != kNone
  bool truthy() const { return number != 0; }
};

class Criteria {
 public:
  // Parses `text`. InvalidArgument "position N: <problem>" (1-based, in characters).
  static Result<Criteria> Parse(std::string_view text);

  Criteria(Criteria&&) noexcept;
  Criteria& operator=(Criteria&&) noexcept;
  ~Criteria();

  // Applies the lambda to a number (variance and value rules) or to the stored labels
  // (multi_rules).
  EvalResult operator()(double x) const;
  EvalResult operator()(const Labels& labels) const;

  const std::string& text() const { return text_; }

  struct Node;

 private:
  Criteria() = default;
  std::string text_;
  std::unique_ptr<Node> root_;
};

}  // namespace vigil::superbench
