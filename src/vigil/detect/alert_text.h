// An alert as one line of text, what `vigil detect` prints as alerts are raised (docs/detect.md).
#pragma once

#include <string>

#include "vigil/detect/detector.h"

namespace vigil::detect {

// "ALERT <machine> <kind> <rule>[ <component>] onset <UTC> detected <UTC> (+<s> s): <evidence>",
// without a newline. A divergence's evidence reads "<signal> <stat> <value> vs <peer median>
// (<deviation> sd)", a rule's "<signal> = <value>", joined by ", ". Thread-safe.
std::string AlertLine(const Alert& alert);

}  // namespace vigil::detect
