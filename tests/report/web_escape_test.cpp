// Escaping trace-given text for the HTML report and its embedded JSON.
#include <catch2/catch.hpp>

#include "web_escape.h"

using namespace streamhaz::report;

TEST_CASE("web escape: invalid UTF-8 becomes U+FFFD, valid text is kept") {
  CHECK(valid_utf8("ipg_buffer[0] \xC3\xA9") == "ipg_buffer[0] \xC3\xA9");
  CHECK(valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(valid_utf8("\xC3") == "\xEF\xBF\xBD");                   // cut sequence
  CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");   // overlong '/'
  CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(valid_utf8("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");
}

TEST_CASE("web escape: HTML text escapes markup, quotes and control characters") {
  CHECK(html_text("void f<float>(a&b)") == "void f&lt;float&gt;(a&amp;b)");
  CHECK(html_text("\"><img src=x onerror='1'>") == "&quot;&gt;&lt;img src=x onerror=&#39;1&#39;&gt;");
  CHECK(html_text("a\x01\nb") == "a\\x01\\x0ab");
  CHECK(html_text("\xFF") == "\\xff");  // invalid bytes are escaped like the text report does
}

TEST_CASE("web escape: embedded JSON cannot end its script block") {
  const nlohmann::json j = {{"name", "</script><script>alert(1)</script><!-- & \xE2\x80\xA8 \xFF"}};
  const std::string s = script_json(j);
  CHECK(s.find('<') == std::string::npos);
  CHECK(s.find('>') == std::string::npos);
  CHECK(s.find('&') == std::string::npos);
  CHECK(s.find("\xE2\x80\xA8") == std::string::npos);
  // Still the same JSON when read back.
  const auto back = nlohmann::json::parse(s);
  CHECK(back["name"].get<std::string>().rfind("</script><script>alert(1)</script><!-- & \xE2\x80\xA8 ", 0) == 0);
}
