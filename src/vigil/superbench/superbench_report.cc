#include "vigil/superbench/superbench_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <variant>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil::superbench {
namespace {

// One cell of the table pandas would hold: missing, a bool, a number or text (which stays in
// the Diagnosis: defective details can run to megabytes over a fleet).
using Cell = std::variant<std::monostate, bool, double, std::string_view>;

Cell NumberCell(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }
Cell TextCell(std::string_view s, bool present) { return present ? Cell{s} : Cell{}; }

// The table SuperBench builds, computed cell by cell from the diagnosis, never held whole: the
// defective nodes with their rule values, or (output_all) every node with its raw values.
class Frame {
 public:
  Frame(const FleetTable& t, const Diagnosis& d, bool output_all) : t_(t), d_(d), all_(output_all) {
    columns_ = all_ ? std::vector<std::string>{"Accept", "Number Of Issues", "Category",
                                               "Defective Details"}
                    : std::vector<std::string>{"Category", "Defective Details"};
    const std::vector<std::string>& metrics = all_ ? t.metrics() : d.metrics;
    columns_.insert(columns_.end(), metrics.begin(), metrics.end());
  }

  size_t rows() const { return all_ ? t_.node_count() : d_.defective_order.size(); }
  std::vector<std::string>& columns() { return columns_; }
  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& index(size_t r) const { return t_.node(Node(r)); }

  Cell at(size_t r, size_t c) const {
    const size_t i = Node(r);
    const NodeVerdict& v = d_.nodes[i];
    if (!all_) {
      if (c == 0) return std::string_view(v.categories);
      if (c == 1) return std::string_view(v.details);
      return NumberCell(v.summary[c - 2]);
    }
    switch (c) {
      case 0:
        return !v.defective;
      case 1:
        return static_cast<double>(v.issue_count);
      case 2:
        return TextCell(v.categories, v.defective);
      case 3:
        return TextCell(v.details, v.defective);
      default:
        return NumberCell(t_.at(i, c - 4));
    }
  }

 private:
  size_t Node(size_t r) const { return all_ ? r : d_.defective_order[r]; }

  const FleetTable& t_;
  const Diagnosis& d_;
  bool all_;
  std::vector<std::string> columns_;
};

// Collects the report and hands it to the sink in pieces of a few megabytes.
class Output {
 public:
  explicit Output(const ReportSink& sink) : sink_(sink) {}
  std::string& buffer() { return buffer_; }
  Status Flush(bool force = false) {
    if (!force && buffer_.size() < kPiece) return Status::Ok();
    Status s = sink_(buffer_);
    buffer_.clear();
    return s;
  }

 private:
  static constexpr size_t kPiece = 4u << 20;
  const ReportSink& sink_;
  std::string buffer_;
};

double Round(double v, int decimals) {  // Python's round(v, n): correctly rounded
  return std::strtod(fmt::format("{:.{}f}", v, decimals).c_str(), nullptr);
}

double RoundSignificant(double v, int digits) {  // float('%.{n}g' % v)
  return std::strtod(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
}

// pandas' convert_dtypes(): a column whose numbers are all integral becomes an integer column.
// `shown` maps a cell to what is printed (the md rounding); identity for JSON.
template <typename Shown>
std::vector<bool> IntegralColumns(const Frame& f, const Shown& shown) {
  std::vector<bool> integral(f.columns().size(), true);
  for (size_t r = 0; r < f.rows(); ++r) {
    for (size_t c = 0; c < integral.size(); ++c) {
      if (!integral[c]) continue;
      const Cell cell = shown(c, f.at(r, c));
      if (const double* d = std::get_if<double>(&cell); d != nullptr && *d != std::trunc(*d)) {
        integral[c] = false;
      }
    }
  }
  return integral;
}

Cell AsIs(size_t, Cell c) { return c; }

// A JSON string as Python's json.dumps writes it (ensure_ascii: \uXXXX outside ASCII).
std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s, /*ensure_ascii=*/true);
  return out;
}

// One cell as pandas' to_json (10 decimals) writes it, read back by Python's json and written
// again by json.dumps.
void AppendCell(std::string& out, const Cell& cell, bool integral) {
  if (std::holds_alternative<std::monostate>(cell)) {
    out += "\"N/A\"";
  } else if (const bool* b = std::get_if<bool>(&cell)) {
    out += *b ? "true" : "false";
  } else if (const std::string_view* s = std::get_if<std::string_view>(&cell)) {
    AppendJsonString(out, *s, /*ensure_ascii=*/true);
  } else if (const double d = std::get<double>(cell); integral && std::fabs(d) < 9.2e18) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(d));
  } else if (std::isinf(d)) {
    out += d > 0 ? "Infinity" : "-Infinity";
  } else {
    out += PythonRepr(Round(d, 10));
  }
}

Status JsonLines(const Frame& f, Output& out) {
  const std::vector<bool> integral = IntegralColumns(f, AsIs);
  std::vector<std::string> keys;
  for (const std::string& c : f.columns()) keys.push_back(JsonString(c) + ": ");
  for (size_t r = 0; r < f.rows(); ++r) {
    std::string& o = out.buffer();
    o += "{";
    for (size_t c = 0; c < keys.size(); ++c) {
      o += keys[c];
      AppendCell(o, f.at(r, c), integral[c]);
      o += ", ";
    }
    o += "\"index\": " + JsonString(f.index(r)) + "}\n";
    VIGIL_RETURN_IF_ERROR(out.Flush());
  }
  return out.Flush(true);
}

Status JsonRecords(const Frame& f, Output& out) {
  const std::vector<bool> integral = IntegralColumns(f, AsIs);
  if (f.rows() == 0) {
    out.buffer() += "[]";
    return out.Flush(true);
  }
  std::vector<std::string> keys;
  for (const std::string& c : f.columns()) keys.push_back(",\n        " + JsonString(c) + ": ");
  out.buffer() += "[";
  for (size_t r = 0; r < f.rows(); ++r) {
    std::string& o = out.buffer();
    o += r == 0 ? "\n    {\n" : ",\n    {\n";
    o += "        \"index\": " + JsonString(f.index(r));
    for (size_t c = 0; c < keys.size(); ++c) {
      o += keys[c];
      AppendCell(o, f.at(r, c), integral[c]);
    }
    o += "\n    }";
    VIGIL_RETURN_IF_ERROR(out.Flush());
  }
  out.buffer() += "\n]";
  return out.Flush(true);
}

// The markdown table of SuperBench's generate_md_lines(), or (html) what Python-Markdown's tables
// extension makes of it. Variance columns are percentages, rounded with `decimals` (2
// significant digits below 1); value columns are rounded the same way without the percent.
Status MarkdownOrHtml(const Frame& f, const Diagnosis& d, int decimals, bool html, Output& out) {
  if (f.rows() == 0) return out.Flush(true);
  enum class Kind { kPlain, kValue, kPercent };
  std::vector<Kind> kind(f.columns().size(), Kind::kPlain);
  for (size_t m = 0; m < d.metrics.size(); ++m) {
    for (size_t c = 0; c < f.columns().size(); ++c) {
      if (f.columns()[c] == d.metrics[m]) {
        kind[c] = d.metric_kinds[m] == RuleFunction::kVariance ? Kind::kPercent : Kind::kValue;
      }
    }
  }
  const auto shown = [&](size_t c, Cell cell) -> Cell {
    double* v = std::get_if<double>(&cell);
    if (v == nullptr || kind[c] == Kind::kPlain || decimals <= 0) return cell;
    if (kind[c] == Kind::kPercent) *v *= 100;
    *v = std::fabs(*v) < 1 ? RoundSignificant(*v, decimals) : Round(*v, decimals);
    return cell;
  };
  const std::vector<bool> integral = IntegralColumns(f, shown);
  const auto text = [&](size_t c, const Cell& cell) -> std::string {
    if (std::holds_alternative<std::monostate>(cell)) return "N/A";
    if (const bool* b = std::get_if<bool>(&cell)) return *b ? "True" : "False";
    if (const std::string_view* s = std::get_if<std::string_view>(&cell)) return std::string(*s);
    const double v = std::get<double>(cell);
    if (kind[c] == Kind::kPercent) return PythonRepr(v) + "%";
    if (integral[c]) return fmt::format("{}", static_cast<int64_t>(v));
    return PythonRepr(v);
  };
  std::vector<std::string> header = {"index"};
  header.insert(header.end(), f.columns().begin(), f.columns().end());
  if (html) {
    out.buffer() += "<table>\n<thead>\n<tr>\n";
    for (const std::string& h : header)
      out.buffer() += "<th>" + HtmlEscape(h, /*quotes=*/false) + "</th>\n";
    out.buffer() += "</tr>\n</thead>\n<tbody>\n";
  } else {
    out.buffer() += fmt::format("| {} |\n", fmt::join(header, " | "));
    out.buffer() +=
        fmt::format("| {} |\n", fmt::join(std::vector<std::string>(header.size(), "---"), " | "));
  }
  for (size_t r = 0; r < f.rows(); ++r) {
    std::string& o = out.buffer();
    o += html ? "<tr>\n<td>" + HtmlEscape(f.index(r), /*quotes=*/false) + "</td>\n"
              : "| " + f.index(r);
    for (size_t c = 0; c < f.columns().size(); ++c) {
      const std::string cell = text(c, shown(c, f.at(r, c)));
      o += html ? "<td>" + HtmlEscape(cell, /*quotes=*/false) + "</td>\n" : " | " + cell;
    }
    o += html ? "</tr>\n" : " |\n";
    VIGIL_RETURN_IF_ERROR(out.Flush());
  }
  if (html) out.buffer() += "</tbody>\n</table>";
  return out.Flush(true);
}

}  // namespace

Result<ReportFormat> ParseReportFormat(std::string_view name) {
  if (name == "json") return ReportFormat::kJson;
  if (name == "jsonl") return ReportFormat::kJsonl;
  if (name == "md") return ReportFormat::kMd;
  if (name == "html") return ReportFormat::kHtml;
  return Status::InvalidArgument(
      fmt::format("unknown output format '{}' (json, jsonl, md, html)", std::string(name)));
}

std::string_view ReportExtension(ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return "json";
    case ReportFormat::kJsonl:
      return "jsonl";
    case ReportFormat::kMd:
      return "md";
    case ReportFormat::kHtml:
      return "html";
  }
  return "json";
}

Status WriteDiagnosisReport(const FleetTable& table, const Diagnosis& diagnosis,
                            const ReportOptions& options, const ReportSink& sink) {
  Frame f(table, diagnosis, options.output_all);
  Output out(sink);
  switch (options.format) {
    case ReportFormat::kJson: {
      std::vector<std::string>& c = f.columns();
      if (options.output_all) {
        c[0] = "diagnosis/accept";
        c[1] = "diagnosis/issue_num";
        c[2] = "diagnosis/category";
        c[3] = "diagnosis/issue_details";
      } else {
        c[0] = "diagnosis/category";
        c[1] = "diagnosis/issue_details";
      }
      return JsonRecords(f, out);
    }
    case ReportFormat::kJsonl:
      return JsonLines(f, out);
    case ReportFormat::kMd:
    case ReportFormat::kHtml:
      return MarkdownOrHtml(f, diagnosis, options.decimals, options.format == ReportFormat::kHtml,
                            out);
  }
  return Status::Ok();
}

std::string FormatDiagnosisReport(const FleetTable& table, const Diagnosis& diagnosis,
                                  const ReportOptions& options) {
  std::string text;
  const Status s = WriteDiagnosisReport(table, diagnosis, options, [&](std::string_view piece) {
    text += piece;
    return Status::Ok();
  });
  (void)s;  // the sink never fails
  return text;
}

std::string PythonRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(end - buf));  // "-1.2345e+03"
  const size_t e = sci.find('e');
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  std::string digits;
  const bool negative = sci[0] == '-';
  for (char c : sci.substr(0, e)) {
    if (c >= '0' && c <= '9') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    out += digits + std::string(int_digits - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
  }
  return out;
}

}  // namespace vigil::superbench
