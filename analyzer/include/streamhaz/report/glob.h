// Glob patterns of suppression rules: * matches any run of characters, ? one character,
// \ makes the next character literal. No [classes]: buffer names like "ipg_buffer[0]" must
// match themselves literally.
#pragma once

#include <string_view>

namespace streamhaz::report {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace streamhaz::report
