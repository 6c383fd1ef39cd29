// What the processes of a sharded check send each other, as bytes: collective posts in the
// rounds, findings and trace summaries at the end. Both ends are this build (no versioning).
// Each message's fields are listed once (visit_fields in wire.cpp), for writing and reading.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/collective_matcher.h"
#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis::wire {

class Writer {
 public:
  void u64(uint64_t v);
  void str(const std::string& s);
  void post(const PostRecord& p);
  void finding(const Finding& f);
  void summary(const TraceSummary& s);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  uint64_t u64();
  std::string str();
  PostRecord post();
  Finding finding();
  TraceSummary summary();

 private:
  const std::string& in_;
  size_t at_ = 0;
};

}  // namespace streamhaz::analysis::wire
