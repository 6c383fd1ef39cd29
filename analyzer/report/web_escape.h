// Making text from traces safe for the HTML report and the JSON it embeds. Names from traces
// are bytes that may hold anything: `<`, quotes, `</script>`, control characters, invalid UTF-8.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace streamhaz::report {

// Invalid UTF-8 sequences replaced by U+FFFD, so that every consumer reads the same text.
std::string valid_utf8(std::string_view bytes);

// For HTML text and quoted attribute values: valid UTF-8, control characters as \xNN (as the
// text report prints them), and & < > " ' as character references.
std::string html_text(std::string_view bytes);

// JSON for a <script type="application/json"> block: invalid UTF-8 replaced, and < > & and
// U+2028/U+2029 written as \u escapes, so no string can end the block or open a comment.
std::string script_json(const nlohmann::json& value);

}  // namespace streamhaz::report
