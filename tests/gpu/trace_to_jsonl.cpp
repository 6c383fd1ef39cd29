// Prints a trace file as JSON lines (header first, then one record per line) for
// tests/gpu/check_trace.py; the last line says whether the trace ended cleanly.
#include <cstdio>
#include <iostream>

#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/record_json.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_to_jsonl TRACE.shz\n");
    return 2;
  }
  try {
    streamhaz::trace::TraceReader reader(argv[1]);
    std::cout << nlohmann::json{{"type", "header"}, {"header", reader.header()}}.dump() << "\n";
    streamhaz::trace::Record r;
    while (reader.next(r)) std::cout << streamhaz::trace::to_json(r).dump() << "\n";
    std::cout << nlohmann::json{{"type", "eof"}, {"clean_end", reader.clean_end()}, {"truncated", reader.truncated()},
                                {"records", reader.records_read()}}
                     .dump()
              << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_to_jsonl: %s\n", e.what());
    return 2;
  }
  return 0;
}
