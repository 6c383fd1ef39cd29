#include <catch2/catch.hpp>

#include "streamhaz/trace/printable.h"

using streamhaz::trace::printable;

TEST_CASE("printable: C0 controls and DEL become \\xNN, plain text stays") {
  CHECK(printable("a\tb\x1b[31mc\x7f") == "a\\x09b\\x1b[31mc\\x7f");
  CHECK(printable("name\nstreamhaz: forged line") == "name\\x0astreamhaz: forged line");
  CHECK(printable("<>\"' ok") == "<>\"' ok");
}

TEST_CASE("printable: C1 controls are escaped, as UTF-8 and as lone bytes") {
  CHECK(printable("a\xc2\x9b" "31mb") == "a\\u009b31mb");  // U+009B CSI
  CHECK(printable("\xc2\x85") == "\\u0085");              // U+0085 NEL
  CHECK(printable("a\x9b" "31m") == "a\\x9b31m");           // a lone C1 byte is not UTF-8
}

TEST_CASE("printable: a backslash is escaped so that an escape cannot be forged") {
  CHECK(printable("\\x1b") == "\\\\x1b");
  CHECK(printable("\x1b") != printable("\\x1b"));
}

TEST_CASE("printable: valid UTF-8 stays, invalid bytes are escaped one by one") {
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
  CHECK(printable("caf\xe9") == "caf\\xe9");           // Latin-1
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");         // overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");         // cut off
}

TEST_CASE("printable: bidirectional overrides are escaped") {
  CHECK(printable("a\xe2\x80\xae" "b") == "a\\u202eb");  // U+202E RIGHT-TO-LEFT OVERRIDE
  CHECK(printable("\xe2\x81\xa6") == "\\u2066");
}
