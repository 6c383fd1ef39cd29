// Writes DIR/rank0.shz: a race whose every name tries to break out of the HTML report (script
// end tags, attribute injection, comments, control characters, U+2028, invalid UTF-8). Each
// payload would set document.title to PWNED if the page ever ran it.
#include <iostream>

#include "streamhaz/testing/trace_builder.h"

using namespace streamhaz::trace;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_hostile_trace DIR\n";
    return 2;
  }
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("\"><img src=x onerror=\"document.title='PWNED'\">");
  const StreamId b = r.stream("'><svg onload=document.title='PWNED'>\x01\x1b[31m");
  const uint64_t buf = r.alloc(4096, "buf</script><script>document.title='PWNED'</script>\xff\xfe");
  r.push_range("<!--<script>document.title='PWNED'</script>\xe2\x80\xa8]]>");
  r.kernel(a, "void k<</script><script>document.title='PWNED'</script>>(float*, \"q\" & 'a')", {writes(buf, 4096)});
  r.pop_range();
  r.kernel(b, "<style>*{display:none}</style><b>bold</b>\n", {reads(buf, 4096)});
  run.write_dir(argv[1]);
  return 0;
}
