#include <catch2/catch.hpp>

#include "streamhaz/report/glob.h"

using streamhaz::report::glob_match;

TEST_CASE("glob: literals, * and ?") {
  CHECK(glob_match("ncclAllReduce", "ncclAllReduce"));
  CHECK_FALSE(glob_match("ncclAllReduce", "ncclAllReduce2"));
  CHECK(glob_match("*AllReduce*", "ncclAllReduce"));
  CHECK(glob_match("*", ""));
  CHECK_FALSE(glob_match("?", ""));
  CHECK(glob_match("ipg_buffer?", "ipg_buffer1"));
  CHECK(glob_match("a*b*c", "a-b-b-c"));
  CHECK_FALSE(glob_match("a*b*c", "a-b-b-d"));
  CHECK(glob_match("**x", "yyx"));
}

TEST_CASE("glob: brackets are literal so buffer names match themselves") {
  CHECK(glob_match("ipg_buffer[0]", "ipg_buffer[0]"));
  CHECK_FALSE(glob_match("ipg_buffer[0]", "ipg_buffer0"));
  CHECK(glob_match("ipg_buffer[*]", "ipg_buffer[1]"));
}

TEST_CASE("glob: backslash escapes a wildcard") {
  CHECK(glob_match("a\\*b", "a*b"));
  CHECK_FALSE(glob_match("a\\*b", "axb"));
  CHECK(glob_match("what\\?", "what?"));
}

TEST_CASE("glob: C++ kernel names with templates and quotes") {
  CHECK(glob_match("void scale<*>(*)", "void scale<float, \"q\">(float*, int)"));
}
