// A rank's records read as the run with phantoms (AnalysisOptions::phantoms): the records the
// pass's second variant adds are made one at a time as the reading reaches them, so that the
// variant costs no copy of the judged window (on many ranks, most of the pass's memory).
#include <limits>

#include "engine/rank_schedule.h"

namespace streamhaz::analysis {
namespace {

// Records that belong to the operation before them (a kernel's accesses and GPU times, a name).
bool belongs_to_previous(const trace::Record& r) {
  return std::holds_alternative<trace::Access>(r) || std::holds_alternative<trace::Timing>(r) ||
         std::holds_alternative<trace::StringDef>(r);
}

trace::Access all_memory(uint64_t seq) {
  return trace::Access{seq, 0, std::numeric_limits<uint64_t>::max(), trace::AccessMode::ReadWrite,
                       trace::FootprintTier::Static};
}

}  // namespace

const trace::Record* RankRun::next_with_phantoms() {
  using Step = PhantomReading::Step;
  PhantomReading& p = phantom_reading;
  const std::vector<trace::Record>& records = memory->records;
  for (;;) {
    const size_t at = next_record;
    const bool end = at >= records.size();
    switch (p.step) {
      case Step::Close: {
        // Most records have no insert and no fence before them: straight to the record.
        const bool more = (inserts && next_insert < inserts->size() && (*inserts)[next_insert].before <= at) ||
                          (p.next_fence < phantoms->size() && (*phantoms)[p.next_fence].before <= at);
        p.step = more ? Step::After : Step::Record;
        if (end || !belongs_to_previous(records[at])) {
          const uint64_t kernel = p.kernel;
          p.kernel = 0;
          if (kernel && (!p.footprint || p.unknown_extent)) return &(p.made = all_memory(kernel));
        }
        break;
      }
      case Step::After:
        if (inserts && next_insert < inserts->size() && (*inserts)[next_insert].before <= at &&
            (*inserts)[next_insert].after_previous)
          return &(*inserts)[next_insert++].record;
        p.step = Step::Fence;
        break;
      case Step::Fence:
        if (p.next_fence < phantoms->size() && (*phantoms)[p.next_fence].before <= at) {
          const PhantomFence& f = (*phantoms)[p.next_fence];
          trace::Kernel k;
          k.op = trace::OpCommon{f.seq, f.stream, 0};
          p.step = Step::FenceAccess;
          return &(p.made = std::move(k));
        }
        p.step = Step::Before;
        break;
      case Step::FenceAccess:
        p.step = Step::Fence;
        return &(p.made = all_memory((*phantoms)[p.next_fence++].seq));
      case Step::Before:
        if (inserts && next_insert < inserts->size() && (*inserts)[next_insert].before <= at)
          return &(*inserts)[next_insert++].record;
        p.step = Step::Record;
        break;
      case Step::Record: {
        if (end) return nullptr;
        const trace::Record& r = records[next_record++];
        p.step = Step::Close;
        if (const auto* a = std::get_if<trace::Access>(&r); a && a->op_seq == p.kernel) {
          if (a->bytes == 0 || a->tier == trace::FootprintTier::Pointer) {
            p.unknown_extent = true;  // its phantom stands for it
            continue;
          }
          p.footprint = true;
        }
        if (const auto* k = std::get_if<trace::Kernel>(&r)) {
          p.kernel = k->op.seq;
          p.footprint = p.unknown_extent = false;
        }
        if (skip && skipped(r)) continue;
        return &r;
      }
    }
  }
}

}  // namespace streamhaz::analysis
