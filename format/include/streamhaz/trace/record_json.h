// A record as a JSON object ({"type": "kernel", "seq": ..., ...}), field names as in the
// format's field list. Used by `streamhaz export --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace {

nlohmann::json to_json(const Record& r);

}  // namespace streamhaz::trace
