// Test support (linked into tests only): checks of the SVG documents Vigil writes
// (core/svg_plot.h) that a test can assert without an XML library.
#pragma once

#include <string>
#include <string_view>

namespace vigil::testing {

// "" when `xml` is well-formed as far as Vigil's documents go: at most an XML declaration, then
// one root element, every tag closed in order, attribute values quoted, no '<' or bare '&' in
// text or values (only the five predefined entities and &#39;). Else what is wrong and where.
std::string XmlProblem(std::string_view xml);

// "" when no figure of `svg` is nonsense: no NaN or infinity in a coordinate or a text, and no
// negative width, height or radius. Else the first such place.
std::string SvgNonsense(std::string_view svg);

// How many times `needle` occurs in `haystack`.
size_t Occurrences(std::string_view haystack, std::string_view needle);

}  // namespace vigil::testing
