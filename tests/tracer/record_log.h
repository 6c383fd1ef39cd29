// A RecordSink that keeps records in memory, and helpers to pick them out by type.
#pragma once

#include <vector>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::testing {

struct RecordLog : RecordSink {
  std::vector<trace::Record> records;
  void add(const trace::Record& r) override { records.push_back(r); }

  template <class T> std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& r : records)
      if (auto* p = std::get_if<T>(&r)) out.push_back(*p);
    return out;
  }
  template <class T> size_t count() const { return all<T>().size(); }
};

inline KernelLaunch launch(uint64_t function, std::string_view name) {
  KernelLaunch k;
  k.function = function;
  k.name = name;
  return k;
}

}  // namespace streamhaz::tracer::testing
