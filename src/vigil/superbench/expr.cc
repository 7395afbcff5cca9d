#include "vigil/superbench/expr.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "vigil/core/bounds.h"
#include "vigil/core/text.h"

namespace vigil::superbench {

namespace {

enum class Op {
  kNumber,
  kString,
  kTrue,
  kFalse,
  kNone,
  kParam,  // leaves
  kIfElse,
  kOr,
  kAnd,
  kNot,
  kCompare,  // logic
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kNeg,
  kPos,  // arithmetic
  kIndex,
  kValues,  // label["rule"], m.values()
  kMin,
  kMax,
  kSum,
  kLen,
  kAbs,
  kBool,  // built-in functions
};

enum class Cmp { kLt, kGt, kLe, kGe, kEq, kNe };

// Limits, so that no input can exhaust the stack when parsing, evaluating or freeing the tree.
constexpr int kMaxDepth = 64;        // nested parentheses, 'not' and signs
constexpr size_t kMaxLength = 1000;  // characters; bounds the chains of 'and', '+' and the rest

}  // namespace

struct Criteria::Node {
  Op op;
  double number = 0;
  std::string text;       // kString
  std::vector<Cmp> cmps;  // kCompare: between consecutive kids
  std::vector<std::unique_ptr<Node>> kids;
};

namespace {

using Node = Criteria::Node;

// ----------------------------------------------------------------------------------- parsing

struct Token {
  enum Kind { kEnd, kNumber, kString, kName, kOp } kind = kEnd;
  std::string text;  // the name or operator, or the string's contents
  double number = 0;
  size_t pos = 0;  // 0-based offset in the criteria
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<std::unique_ptr<Node>> ParseLambda() {
    VIGIL_RETURN_IF_ERROR(Next());
    if (!IsName("lambda")) return Error(tok_, "criteria must start with 'lambda'");
    VIGIL_RETURN_IF_ERROR(Next());
    if (tok_.kind != Token::kName || IsKeyword(tok_.text)) {
      return Error(tok_, "expected the lambda's parameter name");
    }
    param_ = tok_.text;
    VIGIL_RETURN_IF_ERROR(Next());
    if (IsOp(",")) return Error(tok_, "the lambda must take exactly one parameter");
    VIGIL_RETURN_IF_ERROR(Expect(":"));
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> body, Expr());
    if (tok_.kind != Token::kEnd) return Error(tok_, "unexpected " + Describe(tok_));
    return body;
  }

 private:
  static bool IsKeyword(std::string_view w) {
    return w == "lambda" || w == "if" || w == "else" || w == "and" || w == "or" || w == "not" ||
           w == "True" || w == "False" || w == "None";
  }
  bool IsName(std::string_view w) const { return tok_.kind == Token::kName && tok_.text == w; }
  bool IsOp(std::string_view o) const { return tok_.kind == Token::kOp && tok_.text == o; }

  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Token::kEnd:
        return "end of criteria";
      case Token::kString:
        return "string " + Quote(t.text);
      default:
        return "'" + t.text + "'";
    }
  }
  static Status Error(const Token& t, std::string_view what) {
    return Status::InvalidArgument(fmt::format("position {}: {}", t.pos + 1, what));
  }
  Status Expect(std::string_view op) {
    if (!IsOp(op)) return Error(tok_, fmt::format("expected '{}', found {}", op, Describe(tok_)));
    return Next();
  }

  Status Next() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
    tok_ = Token{};
    tok_.pos = i_;
    if (i_ >= s_.size()) return Status::Ok();
    const char c = s_[i_];
    const auto is_digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    const auto is_word = [&](char ch) {
      return ch == '_' || is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    };
    if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1]))) {
      size_t j = i_;
      while (j < s_.size() && (is_digit(s_[j]) || s_[j] == '.')) ++j;
      if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
        size_t k = j + 1;
        if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
        if (k < s_.size() && is_digit(s_[k])) {
          j = k;
          while (j < s_.size() && is_digit(s_[j])) ++j;
        }
      }
      const std::string_view lit = s_.substr(i_, j - i_);
      double v = 0;
      const auto [end, ec] = std::from_chars(lit.data(), lit.data() + lit.size(), v);
      if (ec != std::errc() || end != lit.data() + lit.size() ||
          (j < s_.size() && is_word(s_[j]))) {
        return Error(tok_, fmt::format("bad number {}", Quote(s_.substr(i_, j - i_ + 1))));
      }
      if (!kMetricValueBounds.Contains(v)) {  // the range of the values it is compared with
        return Error(tok_, fmt::format("number {}", DescribeOutside(v, kMetricValueBounds, lit)));
      }
      tok_.kind = Token::kNumber;
      tok_.number = v;
      tok_.text = lit;
      i_ = j;
      return Status::Ok();
    }
    if (is_word(c)) {
      size_t j = i_;
      while (j < s_.size() && is_word(s_[j])) ++j;
      tok_.kind = Token::kName;
      tok_.text = s_.substr(i_, j - i_);
      i_ = j;
      return Status::Ok();
    }
    if (c == '"' || c == '\'') {
      size_t j = i_ + 1;
      std::string text;
      for (; j < s_.size() && s_[j] != c; ++j) {
        if (s_[j] == '\\') return Error(tok_, "escapes in strings are not supported");
        text += s_[j];
      }
      if (j >= s_.size()) return Error(tok_, "unterminated string");
      tok_.kind = Token::kString;
      tok_.text = std::move(text);
      i_ = j + 1;
      return Status::Ok();
    }
    static constexpr std::string_view kOps[] = {"**", "//", "<=", ">=", "==", "!=", "<",
                                                ">",  "+",  "-",  "*",  "/",  "%",  "(",
                                                ")",  "[",  "]",  ",",  ":",  "."};
    for (std::string_view op : kOps) {
      if (s_.substr(i_, op.size()) == op) {
        tok_.kind = Token::kOp;
        tok_.text = op;
        i_ += op.size();
        return Status::Ok();
      }
    }
    return Error(tok_, fmt::format("unexpected character {}", Quote(s_.substr(i_, 1))));
  }

  static std::unique_ptr<Node> Make(Op op, std::unique_ptr<Node> a = nullptr,
                                    std::unique_ptr<Node> b = nullptr) {
    auto n = std::make_unique<Node>();
    n->op = op;
    if (a) n->kids.push_back(std::move(a));
    if (b) n->kids.push_back(std::move(b));
    return n;
  }

  // Guards recursion: every rule that can nest goes through here.
  struct DepthGuard {
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    int& depth;
  };

  Result<std::unique_ptr<Node>> Expr() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return Error(tok_, "expression nested too deeply");
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Or());
    if (!IsName("if")) return a;
    VIGIL_RETURN_IF_ERROR(Next());
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> cond, Or());
    if (!IsName("else")) return Error(tok_, "expected 'else', found " + Describe(tok_));
    VIGIL_RETURN_IF_ERROR(Next());
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Expr());
    auto n = Make(Op::kIfElse, std::move(a), std::move(cond));
    n->kids.push_back(std::move(b));
    return n;
  }

  Result<std::unique_ptr<Node>> Or() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, And());
    while (IsName("or")) {
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, And());
      a = Make(Op::kOr, std::move(a), std::move(b));
    }
    return a;
  }

  Result<std::unique_ptr<Node>> And() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Not());
    while (IsName("and")) {
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Not());
      a = Make(Op::kAnd, std::move(a), std::move(b));
    }
    return a;
  }

  Result<std::unique_ptr<Node>> Not() {
    if (!IsName("not")) return Compare();
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return Error(tok_, "expression nested too deeply");
    VIGIL_RETURN_IF_ERROR(Next());
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Not());
    return Make(Op::kNot, std::move(a));
  }

  Result<std::unique_ptr<Node>> Compare() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Sum());
    static constexpr std::pair<std::string_view, Cmp> kCmps[] = {
        {"<", Cmp::kLt},  {">", Cmp::kGt},  {"<=", Cmp::kLe},
        {">=", Cmp::kGe}, {"==", Cmp::kEq}, {"!=", Cmp::kNe}};
    std::unique_ptr<Node> cmp;
    for (;;) {
      const auto* found = std::find_if(std::begin(kCmps), std::end(kCmps),
                                       [&](const auto& c) { return IsOp(c.first); });
      if (found == std::end(kCmps)) break;
      if (!cmp) cmp = Make(Op::kCompare, std::move(a));
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Sum());
      cmp->cmps.push_back(found->second);
      cmp->kids.push_back(std::move(b));
    }
    return cmp ? std::move(cmp) : std::move(a);
  }

  Result<std::unique_ptr<Node>> Sum() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Term());
    while (IsOp("+") || IsOp("-")) {
      const Op op = IsOp("+") ? Op::kAdd : Op::kSub;
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Term());
      a = Make(op, std::move(a), std::move(b));
    }
    return a;
  }

  Result<std::unique_ptr<Node>> Term() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Unary());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      const Op op = IsOp("*")   ? Op::kMul
                    : IsOp("/") ? Op::kDiv
                    : IsOp("%") ? Op::kMod
                                : Op::kFloorDiv;
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Unary());
      a = Make(op, std::move(a), std::move(b));
    }
    return a;
  }

  Result<std::unique_ptr<Node>> Unary() {
    if (!IsOp("-") && !IsOp("+")) return Power();
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return Error(tok_, "expression nested too deeply");
    const Op op = IsOp("-") ? Op::kNeg : Op::kPos;
    VIGIL_RETURN_IF_ERROR(Next());
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Unary());
    return Make(op, std::move(a));
  }

  Result<std::unique_ptr<Node>> Power() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Primary());
    if (!IsOp("**")) return a;
    VIGIL_RETURN_IF_ERROR(Next());
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> b, Unary());
    return Make(Op::kPow, std::move(a), std::move(b));
  }

  Result<std::unique_ptr<Node>> Primary() {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Atom());
    for (;;) {
      if (IsOp("[")) {
        VIGIL_RETURN_IF_ERROR(Next());
        VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> key, Expr());
        VIGIL_RETURN_IF_ERROR(Expect("]"));
        a = Make(Op::kIndex, std::move(a), std::move(key));
      } else if (IsOp(".")) {
        VIGIL_RETURN_IF_ERROR(Next());
        if (!IsName("values")) {
          return Error(tok_, "only the .values() method is supported, not " + Describe(tok_));
        }
        VIGIL_RETURN_IF_ERROR(Next());
        VIGIL_RETURN_IF_ERROR(Expect("("));
        VIGIL_RETURN_IF_ERROR(Expect(")"));
        a = Make(Op::kValues, std::move(a));
      } else {
        return a;
      }
    }
  }

  Result<std::unique_ptr<Node>> Atom() {
    const Token t = tok_;
    if (t.kind == Token::kNumber || t.kind == Token::kString) {
      auto n = Make(t.kind == Token::kNumber ? Op::kNumber : Op::kString);
      n->number = t.number;
      n->text = t.text;
      VIGIL_RETURN_IF_ERROR(Next());
      return n;
    }
    if (IsOp("(")) {
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> a, Expr());
      VIGIL_RETURN_IF_ERROR(Expect(")"));
      return a;
    }
    if (t.kind != Token::kName || IsKeyword(t.text)) {
      if (t.text != "True" && t.text != "False" && t.text != "None") {
        return Error(t, "unexpected " + Describe(t));
      }
    }
    static constexpr std::pair<std::string_view, Op> kConstants[] = {
        {"True", Op::kTrue}, {"False", Op::kFalse}, {"None", Op::kNone}};
    for (const auto& [name, op] : kConstants) {
      if (t.text == name) {
        VIGIL_RETURN_IF_ERROR(Next());
        return Make(op);
      }
    }
    if (t.text == param_) {
      VIGIL_RETURN_IF_ERROR(Next());
      return Make(Op::kParam);
    }
    static constexpr std::pair<std::string_view, Op> kFunctions[] = {
        {"min", Op::kMin}, {"max", Op::kMax}, {"sum", Op::kSum},
        {"len", Op::kLen}, {"abs", Op::kAbs}, {"bool", Op::kBool}};
    for (const auto& [name, op] : kFunctions) {
      if (t.text != name) continue;
      VIGIL_RETURN_IF_ERROR(Next());
      VIGIL_RETURN_IF_ERROR(Expect("("));
      auto call = Make(op);
      for (;;) {
        VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> arg, Expr());
        call->kids.push_back(std::move(arg));
        if (!IsOp(",")) break;
        VIGIL_RETURN_IF_ERROR(Next());
      }
      VIGIL_RETURN_IF_ERROR(Expect(")"));
      const size_t n = call->kids.size();
      const bool variadic = op == Op::kMin || op == Op::kMax;
      if (!variadic && n != 1) return Error(t, fmt::format("{}() takes one argument", name));
      return call;
    }
    return Error(t, fmt::format("unknown name {} (the parameter is '{}'; functions: min, max, "
                                "sum, len, abs, bool)",
                                Quote(t.text), param_));
  }

  std::string_view s_;
  size_t i_ = 0;
  Token tok_;
  std::string param_;
  int depth_ = 0;
};

// -------------------------------------------------------------------------------- evaluation

struct Value {
  enum Kind { kNone, kBool, kNumber, kString, kLabels, kMap, kList } kind = kNone;
  double num = 0;
  std::string_view str;
  const Labels* labels = nullptr;
  const StoredLabel* map = nullptr;
  std::shared_ptr<const std::vector<double>> list;

  static Value Number(double v) { return Value{kNumber, v, {}, nullptr, nullptr, nullptr}; }
  static Value Bool(bool b) { return Value{kBool, b ? 1.0 : 0.0, {}, nullptr, nullptr, nullptr}; }
  bool numeric() const { return kind == kNumber || kind == kBool; }
};

class Evaluator {
 public:
  explicit Evaluator(Value param) : param_(std::move(param)) {}

  EvalResult Run(const Node& root) {
    const Value v = Eval(root);
    EvalResult r;
    r.error = error_;
    r.message = message_;
    if (error_ != EvalError::kNone) return r;
    if (v.kind == Value::kBool) r.kind = EvalResult::Kind::kBool;
    if (v.kind == Value::kNumber) r.kind = EvalResult::Kind::kNumber;
    r.number = v.num;
    return r;
  }

 private:
  Value Fail(EvalError e, std::string message) {
    if (error_ == EvalError::kNone) {
      error_ = e;
      message_ = std::move(message);
    }
    return {};
  }
  bool failed() const { return error_ != EvalError::kNone; }

  static bool Truthy(const Value& v) {
    switch (v.kind) {
      case Value::kNone:
        return false;
      case Value::kBool:
      case Value::kNumber:
        return v.num != 0;  // NaN is true, as in Python
      case Value::kString:
        return !v.str.empty();
      case Value::kLabels:
        return !v.labels->empty();
      case Value::kMap:
        return !v.map->values.empty();
      case Value::kList:
        return !v.list->empty();
    }
    return false;
  }

  // The numbers of an iterable (a list from .values()).
  const std::vector<double>* Numbers(const Value& v, std::string_view fn) {
    if (v.kind != Value::kList) {
      Fail(EvalError::kOther, fmt::format("{}() needs the numbers of .values()", fn));
      return nullptr;
    }
    return v.list.get();
  }

  Value MinMax(const Node& n) {
    const bool is_min = n.op == Op::kMin;
    std::vector<double> args;
    const std::vector<double>* xs = &args;
    Value iterable;  // holds the list that xs points into
    if (n.kids.size() == 1) {
      iterable = Eval(*n.kids[0]);
      if (failed()) return {};
      xs = Numbers(iterable, is_min ? "min" : "max");
      if (xs == nullptr) return {};
    } else {
      for (const auto& k : n.kids) {
        const Value v = Eval(*k);
        if (failed()) return {};
        if (!v.numeric()) return Fail(EvalError::kOther, "min()/max() of a non-number");
        args.push_back(v.num);
      }
    }
    if (xs->empty()) return Fail(EvalError::kOther, "min()/max() of an empty sequence");
    // Python keeps the first item unless a later one compares smaller (larger): with NaN in the
    // list the result depends on the order, exactly as in SuperBench.
    double best = (*xs)[0];
    for (size_t i = 1; i < xs->size(); ++i) {
      if (is_min ? (*xs)[i] < best : (*xs)[i] > best) best = (*xs)[i];
    }
    return Value::Number(best);
  }

  Value Arith(Op op, const Value& a, const Value& b) {
    if (!a.numeric() || !b.numeric()) {
      return Fail(EvalError::kOther, "arithmetic on a value that is not a number");
    }
    const double x = a.num, y = b.num;
    switch (op) {
      case Op::kAdd:
        return Value::Number(x + y);
      case Op::kSub:
        return Value::Number(x - y);
      case Op::kMul:
        return Value::Number(x * y);
      case Op::kDiv:
        if (y == 0) return Fail(EvalError::kOther, "division by zero");
        return Value::Number(x / y);
      case Op::kFloorDiv:
        if (y == 0) return Fail(EvalError::kOther, "division by zero");
        return Value::Number(std::floor(x / y));
      case Op::kMod: {
        if (y == 0) return Fail(EvalError::kOther, "modulo by zero");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;  // Python: the sign of the divisor
        return Value::Number(m);
      }
      case Op::kPow: {
        if (x == 0 && y < 0) return Fail(EvalError::kOther, "zero to a negative power");
        const double p = std::pow(x, y);
        if (std::isnan(p) && !std::isnan(x) && !std::isnan(y)) {
          return Fail(EvalError::kOther, "negative number to a fractional power");
        }
        return Value::Number(p);
      }
      default:
        return {};
    }
  }

  // One comparison, or nullopt with an error set (ordering values that have none).
  std::optional<bool> Compare(Cmp c, const Value& a, const Value& b) {
    if (a.numeric() && b.numeric()) {
      switch (c) {
        case Cmp::kLt:
          return a.num < b.num;
        case Cmp::kGt:
          return a.num > b.num;
        case Cmp::kLe:
          return a.num <= b.num;
        case Cmp::kGe:
          return a.num >= b.num;
        case Cmp::kEq:
          return a.num == b.num;
        case Cmp::kNe:
          return a.num != b.num;
      }
    }
    if (c == Cmp::kEq || c == Cmp::kNe) {
      bool same = a.kind == b.kind;
      if (same && a.kind == Value::kString) same = a.str == b.str;
      if (same && a.kind != Value::kNone && a.kind != Value::kString) same = false;  // identity
      return c == Cmp::kEq ? same : !same;
    }
    if (a.kind == Value::kString && b.kind == Value::kString) {
      const int r = a.str.compare(b.str);
      return c == Cmp::kLt ? r < 0 : c == Cmp::kGt ? r > 0 : c == Cmp::kLe ? r <= 0 : r >= 0;
    }
    Fail(EvalError::kOther, "ordering comparison between values of different kinds");
    return std::nullopt;
  }

  Value Index(const Value& container, const Value& key) {
    if (container.kind == Value::kLabels || container.kind == Value::kMap) {
      if (key.kind != Value::kString) return Fail(EvalError::kKeyError, "key is not a string");
      if (container.kind == Value::kLabels) {
        auto it = container.labels->find(key.str);
        if (it == container.labels->end()) {
          return Fail(EvalError::kKeyError, fmt::format("no stored rule {}", Quote(key.str)));
        }
        if (!it->second.is_map) return Value::Number(it->second.count);
        Value v;
        v.kind = Value::kMap;
        v.map = &it->second;
        return v;
      }
      for (const auto& [metric, value] : container.map->values) {
        if (metric == key.str) return Value::Number(value);
      }
      return Fail(EvalError::kKeyError, fmt::format("no metric {}", Quote(key.str)));
    }
    if (container.kind == Value::kList && key.numeric()) {
      const auto n = static_cast<double>(container.list->size());
      double i = key.num;
      if (i != std::floor(i)) return Fail(EvalError::kOther, "list index is not an integer");
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Fail(EvalError::kOther, "list index out of range");
      return Value::Number((*container.list)[static_cast<size_t>(i)]);
    }
    return Fail(EvalError::kOther, "indexing a value that has no items");
  }

  Value Eval(const Node& n) {
    switch (n.op) {
      case Op::kNumber:
        return Value::Number(n.number);
      case Op::kString: {
        Value v;
        v.kind = Value::kString;
        v.str = n.text;
        return v;
      }
      case Op::kTrue:
        return Value::Bool(true);
      case Op::kFalse:
        return Value::Bool(false);
      case Op::kNone:
        return {};
      case Op::kParam:
        return param_;
      case Op::kIfElse: {
        const Value cond = Eval(*n.kids[1]);
        if (failed()) return {};
        return Eval(*n.kids[Truthy(cond) ? 0 : 2]);
      }
      case Op::kOr:
      case Op::kAnd: {  // Python returns the deciding operand, not a bool
        Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        if (Truthy(a) == (n.op == Op::kOr)) return a;
        return Eval(*n.kids[1]);
      }
      case Op::kNot: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        return Value::Bool(!Truthy(a));
      }
      case Op::kCompare: {
        Value left = Eval(*n.kids[0]);
        for (size_t i = 0; i < n.cmps.size(); ++i) {
          if (failed()) return {};
          Value right = Eval(*n.kids[i + 1]);
          if (failed()) return {};
          const std::optional<bool> r = Compare(n.cmps[i], left, right);
          if (!r) return {};
          if (!*r) return Value::Bool(false);
          left = std::move(right);
        }
        return Value::Bool(true);
      }
      case Op::kNeg:
      case Op::kPos: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        if (!a.numeric()) return Fail(EvalError::kOther, "sign of a value that is not a number");
        return Value::Number(n.op == Op::kNeg ? -a.num : a.num);
      }
      case Op::kIndex: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        const Value k = Eval(*n.kids[1]);
        if (failed()) return {};
        return Index(a, k);
      }
      case Op::kValues: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        if (a.kind != Value::kMap) {
          return Fail(EvalError::kOther,
                      ".values() of something other than a stored rule's metrics");
        }
        auto list = std::make_shared<std::vector<double>>();
        for (const auto& kv : a.map->values) list->push_back(kv.second);
        Value v;
        v.kind = Value::kList;
        v.list = std::move(list);
        return v;
      }
      case Op::kMin:
      case Op::kMax:
        return MinMax(n);
      case Op::kSum:
      case Op::kLen:
      case Op::kAbs:
      case Op::kBool: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        if (n.op == Op::kBool) return Value::Bool(Truthy(a));
        if (n.op == Op::kAbs) {
          if (!a.numeric()) return Fail(EvalError::kOther, "abs() of a value that is not a number");
          return Value::Number(std::fabs(a.num));
        }
        if (n.op == Op::kLen) {
          switch (a.kind) {
            case Value::kString:
              return Value::Number(static_cast<double>(a.str.size()));
            case Value::kLabels:
              return Value::Number(static_cast<double>(a.labels->size()));
            case Value::kMap:
              return Value::Number(static_cast<double>(a.map->values.size()));
            case Value::kList:
              return Value::Number(static_cast<double>(a.list->size()));
            default:
              return Fail(EvalError::kOther, "len() of a value that has no length");
          }
        }
        const std::vector<double>* xs = Numbers(a, "sum");
        if (xs == nullptr) return {};
        double total = 0;
        for (double x : *xs) total += x;  // left to right, as Python's sum()
        return Value::Number(total);
      }
      default: {
        const Value a = Eval(*n.kids[0]);
        if (failed()) return {};
        const Value b = Eval(*n.kids[1]);
        if (failed()) return {};
        return Arith(n.op, a, b);
      }
    }
  }

  Value param_;
  EvalError error_ = EvalError::kNone;
  std::string message_;
};

}  // namespace

Result<Criteria> Criteria::Parse(std::string_view text) {
  if (text.size() > kMaxLength) {
    return Status::InvalidArgument(
        fmt::format("position {}: criteria longer than {} characters", kMaxLength + 1, kMaxLength));
  }
  Parser parser(text);
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Node> root, parser.ParseLambda());
  Criteria c;
  c.text_ = text;
  c.root_ = std::move(root);
  return c;
}

Criteria::Criteria(Criteria&&) noexcept = default;
Criteria& Criteria::operator=(Criteria&&) noexcept = default;
Criteria::~Criteria() = default;

EvalResult Criteria::operator()(double x) const { return Evaluator(Value::Number(x)).Run(*root_); }

EvalResult Criteria::operator()(const Labels& labels) const {
  Value v;
  v.kind = Value::kLabels;
  v.labels = &labels;
  return Evaluator(std::move(v)).Run(*root_);
}

}  // namespace vigil::superbench
