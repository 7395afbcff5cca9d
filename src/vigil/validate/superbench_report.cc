#include "vigil/validate/superbench_report.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <variant>
#include <vector>

#include "vigil/core/json.h"

namespace vigil::validate {
namespace {

// One cell of the table pandas would hold: missing, a bool, a number or text (which stays in
// the Diagnosis: defective details can run to megabytes over a fleet).
using Cell = std::variant<std::monostate, bool, double, std::string_view>;

struct Frame {
  std::vector<std::string> columns;
  std::vector<std::string> index;  // node names
  std::vector<std::vector<Cell>> rows;
};

double Round(double v, int decimals) {  // Python's round(v, n): correctly rounded
  return std::strtod(fmt::format("{:.{}f}", v, decimals).c_str(), nullptr);
}

double RoundSignificant(double v, int digits) {  // float('%.{n}g' % v)
  return std::strtod(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
}

// pandas' convert_dtypes(): a column whose numbers are all integral becomes an integer column.
std::vector<bool> IntegralColumns(const Frame& f) {
  std::vector<bool> integral(f.columns.size(), true);
  for (const auto& row : f.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (const double* d = std::get_if<double>(&row[c]); d != nullptr && *d != std::trunc(*d)) {
        integral[c] = false;
      }
    }
  }
  return integral;
}

std::string JsonString(std::string_view s) {  // ensure_ascii differs only outside ASCII
  return DumpJson(Json(std::string(s)));
}

// One cell as pandas' to_json (10 decimals) writes it, read back by Python's json and written
// again by json.dumps.
void AppendCell(std::string& out, const Cell& cell, bool integral) {
  if (std::holds_alternative<std::monostate>(cell)) {
    out += "\"N/A\"";
  } else if (const bool* b = std::get_if<bool>(&cell)) {
    out += *b ? "true" : "false";
  } else if (const std::string_view* s = std::get_if<std::string_view>(&cell)) {
    out += JsonString(*s);
  } else if (const double d = std::get<double>(cell); integral && std::fabs(d) < 9.2e18) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(d));
  } else if (std::isinf(d)) {
    out += d > 0 ? "Infinity" : "-Infinity";
  } else {
    out += PythonRepr(Round(d, 10));
  }
}

// A guess of the output's size, so that it is allocated once, not doubled a dozen times.
size_t SizeGuess(const Frame& f) {
  size_t header = 0;
  for (const std::string& c : f.columns) header += c.size() + 32;
  size_t text = 0;
  for (const auto& row : f.rows) {
    for (const Cell& c : row) {
      if (const std::string_view* s = std::get_if<std::string_view>(&c)) text += s->size();
    }
  }
  return f.rows.size() * header + text + 64;
}

std::string JsonLines(const Frame& f) {
  const std::vector<bool> integral = IntegralColumns(f);
  std::vector<std::string> keys;
  for (const std::string& c : f.columns) keys.push_back(JsonString(c) + ": ");
  std::string out;
  out.reserve(SizeGuess(f));
  for (size_t r = 0; r < f.rows.size(); ++r) {
    out += "{";
    for (size_t c = 0; c < f.columns.size(); ++c) {
      out += keys[c];
      AppendCell(out, f.rows[r][c], integral[c]);
      out += ", ";
    }
    out += "\"index\": " + JsonString(f.index[r]) + "}\n";
  }
  return out;
}

std::string JsonRecords(const Frame& f) {
  const std::vector<bool> integral = IntegralColumns(f);
  if (f.rows.empty()) return "[]";
  std::vector<std::string> keys;
  for (const std::string& c : f.columns) keys.push_back(",\n        " + JsonString(c) + ": ");
  std::string out = "[";
  out.reserve(SizeGuess(f));
  for (size_t r = 0; r < f.rows.size(); ++r) {
    out += r == 0 ? "\n    {\n" : ",\n    {\n";
    out += "        \"index\": " + JsonString(f.index[r]);
    for (size_t c = 0; c < f.columns.size(); ++c) {
      out += keys[c];
      AppendCell(out, f.rows[r][c], integral[c]);
    }
    out += "\n    }";
  }
  out += "\n]";
  return out;
}

// The cells of the markdown table as SuperBench's generate_md_lines() prints them.
std::vector<std::vector<std::string>> MarkdownCells(Frame f, const Diagnosis& d, int decimals) {
  std::vector<bool> percent(f.columns.size(), false);
  for (size_t m = 0; m < d.metrics.size(); ++m) {
    for (size_t c = 0; c < f.columns.size(); ++c) {
      if (f.columns[c] != d.metrics[m]) continue;
      const bool variance = d.metric_kinds[m] == RuleFunction::kVariance;
      percent[c] = variance;
      for (auto& row : f.rows) {
        double* v = std::get_if<double>(&row[c]);
        if (v == nullptr || decimals <= 0) continue;
        if (variance) *v *= 100;
        *v = std::fabs(*v) < 1 ? RoundSignificant(*v, decimals) : Round(*v, decimals);
      }
    }
  }
  const std::vector<bool> integral = IntegralColumns(f);
  std::vector<std::vector<std::string>> cells;
  for (size_t r = 0; r < f.rows.size(); ++r) {
    std::vector<std::string> line = {f.index[r]};
    for (size_t c = 0; c < f.columns.size(); ++c) {
      const Cell& cell = f.rows[r][c];
      if (std::holds_alternative<std::monostate>(cell)) {
        line.emplace_back("N/A");
      } else if (const bool* b = std::get_if<bool>(&cell)) {
        line.emplace_back(*b ? "True" : "False");
      } else if (const std::string_view* s = std::get_if<std::string_view>(&cell)) {
        line.emplace_back(*s);
      } else if (percent[c]) {
        line.push_back(PythonRepr(std::get<double>(cell)) + "%");
      } else if (integral[c]) {
        line.push_back(fmt::format("{}", static_cast<int64_t>(std::get<double>(cell))));
      } else {
        line.push_back(PythonRepr(std::get<double>(cell)));
      }
    }
    cells.push_back(std::move(line));
  }
  return cells;
}

std::string Markdown(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& cells) {
  if (cells.empty()) return "";
  std::string out = fmt::format("| {} |\n", fmt::join(header, " | "));
  out += fmt::format("| {} |\n", fmt::join(std::vector<std::string>(header.size(), "---"), " | "));
  for (const auto& line : cells) out += fmt::format("| {} |\n", fmt::join(line, " | "));
  return out;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// What Python-Markdown's tables extension makes of the markdown table.
std::string Html(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& cells) {
  if (cells.empty()) return "";
  std::string out = "<table>\n<thead>\n<tr>\n";
  for (const std::string& h : header) out += "<th>" + HtmlEscape(h) + "</th>\n";
  out += "</tr>\n</thead>\n<tbody>\n";
  for (const auto& line : cells) {
    out += "<tr>\n";
    for (const std::string& c : line) out += "<td>" + HtmlEscape(c) + "</td>\n";
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>";
  return out;
}

Cell NumberCell(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }
Cell TextCell(std::string_view s, bool present) { return present ? Cell{s} : Cell{}; }

Frame BuildFrame(const FleetTable& t, const Diagnosis& d, bool output_all) {
  Frame f;
  if (!output_all) {
    f.columns = {"Category", "Defective Details"};
    f.columns.insert(f.columns.end(), d.metrics.begin(), d.metrics.end());
    for (size_t i : d.defective_order) {
      const NodeVerdict& v = d.nodes[i];
      std::vector<Cell> row = {std::string_view(v.categories), std::string_view(v.details)};
      for (double x : v.summary) row.push_back(NumberCell(x));
      f.index.push_back(t.node(i));
      f.rows.push_back(std::move(row));
    }
    return f;
  }
  f.columns = {"Accept", "Number Of Issues", "Category", "Defective Details"};
  f.columns.insert(f.columns.end(), t.metrics().begin(), t.metrics().end());
  for (size_t i = 0; i < t.node_count(); ++i) {
    const NodeVerdict& v = d.nodes[i];
    std::vector<Cell> row = {!v.defective, static_cast<double>(v.issue_count),
                             TextCell(v.categories, v.defective), TextCell(v.details, v.defective)};
    for (size_t j = 0; j < t.metric_count(); ++j) row.push_back(NumberCell(t.at(i, j)));
    f.index.push_back(t.node(i));
    f.rows.push_back(std::move(row));
  }
  return f;
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

std::string FormatDiagnosisReport(const FleetTable& table, const Diagnosis& diagnosis,
                                  const ReportOptions& options) {
  Frame f = BuildFrame(table, diagnosis, options.output_all);
  switch (options.format) {
    case ReportFormat::kJson:
      if (options.output_all) {
        f.columns[0] = "diagnosis/accept";
        f.columns[1] = "diagnosis/issue_num";
        f.columns[2] = "diagnosis/category";
        f.columns[3] = "diagnosis/issue_details";
      } else {
        f.columns[0] = "diagnosis/category";
        f.columns[1] = "diagnosis/issue_details";
      }
      return JsonRecords(f);
    case ReportFormat::kJsonl:
      return JsonLines(f);
    case ReportFormat::kMd:
    case ReportFormat::kHtml: {
      std::vector<std::string> header = {"index"};
      header.insert(header.end(), f.columns.begin(), f.columns.end());
      const auto cells = MarkdownCells(std::move(f), diagnosis, options.decimals);
      return options.format == ReportFormat::kMd ? Markdown(header, cells) : Html(header, cells);
    }
  }
  return "";
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

}  // namespace vigil::validate
