#include "vigil/testing/svg_check.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace vigil::testing {
namespace {

constexpr std::array<std::string_view, 6> kEntities = {"&amp;",  "&lt;",  "&gt;",
                                                       "&quot;", "&#39;", "&apos;"};

// True when xml[from, to) holds a '<' or an '&' that starts no known entity.
bool BadText(std::string_view xml, size_t from, size_t to) {
  for (size_t k = from; k < to; ++k) {
    if (xml[k] == '<') return true;
    if (xml[k] != '&') continue;
    const size_t semi = xml.find(';', k);
    if (semi == std::string_view::npos || semi >= to) return true;
    if (std::find(kEntities.begin(), kEntities.end(), xml.substr(k, semi - k + 1)) ==
        kEntities.end()) {
      return true;
    }
  }
  return false;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// True when `text` holds the word nan or inf (as printf writes them), whatever the case.
bool HasNonNumber(std::string_view text) {
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
      word += text[i];
      continue;
    }
    const std::string w = Lower(word);
    if (w == "nan" || w == "inf" || w == "infinity") return true;
    word.clear();
  }
  return false;
}

}  // namespace

std::string XmlProblem(std::string_view xml) {
  std::vector<std::string> open;
  size_t i = 0, roots = 0;
  if (xml.starts_with("<?xml")) {
    const size_t end = xml.find("?>");
    if (end == std::string_view::npos) return "unclosed XML declaration";
    i = end + 2;
  }
  while (i < xml.size()) {
    const size_t lt = xml.find('<', i);
    if (lt == std::string_view::npos) {
      if (BadText(xml, i, xml.size())) return "bad text after the root";
      break;
    }
    if (BadText(xml, i, lt)) return "bad text at " + std::to_string(i);
    const size_t gt = xml.find('>', lt);
    if (gt == std::string_view::npos) return "unclosed tag at " + std::to_string(lt);
    const std::string tag(xml.substr(lt + 1, gt - lt - 1));
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) {
      return "unbalanced quotes in <" + tag + ">";
    }
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1))
        return "</" + tag.substr(1) + "> closes nothing";
      open.pop_back();
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" /\n"));
      if (open.empty() && ++roots > 1) return "two roots";
      if (!tag.ends_with("/")) open.push_back(name);
    }
    i = gt + 1;
  }
  if (roots == 0) return "no root element";
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

std::string SvgNonsense(std::string_view svg) {
  for (size_t i = 0; i < svg.size();) {
    const size_t lt = svg.find('<', i);
    const size_t end = lt == std::string_view::npos ? svg.size() : lt;
    if (HasNonNumber(svg.substr(i, end - i))) {
      return "not a number in the text at " + std::to_string(i) + ": " +
             std::string(svg.substr(i, std::min<size_t>(end - i, 80)));
    }
    if (lt == std::string_view::npos) break;
    const size_t gt = svg.find('>', lt);
    if (gt == std::string_view::npos) break;
    const std::string_view tag = svg.substr(lt, gt - lt + 1);
    // Attributes whose values are numbers or coordinates.
    for (const char* attribute :
         {" x=\"", " y=\"", " x1=\"", " x2=\"", " y1=\"", " y2=\"", " cx=\"", " cy=\"", " r=\"",
          " width=\"", " height=\"", " points=\"", " d=\"", " transform=\""}) {
      const size_t at = tag.find(attribute);
      if (at == std::string_view::npos) continue;
      const size_t from = at + std::string_view(attribute).size();
      const std::string_view value = tag.substr(from, tag.find('"', from) - from);
      const std::string_view name(attribute);
      const bool size = name == " r=\"" || name == " width=\"" || name == " height=\"";
      if (HasNonNumber(value) || (size && value.starts_with("-"))) {
        return "bad value in " + std::string(tag);
      }
    }
    i = gt + 1;
  }
  return "";
}

size_t Occurrences(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace vigil::testing
