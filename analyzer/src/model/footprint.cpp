#include "model/footprint.h"

namespace streamhaz::analysis {

using trace::AccessMode;

void add_rows(std::vector<ByteRange>& out, uint64_t base, uint64_t width, uint64_t rows, uint64_t pitch,
              AccessMode mode) {
  if (width == 0 || rows == 0) return;
  if (rows == 1 || pitch <= width) {  // contiguous (a pitch below the width is taken as packed)
    const uint64_t hi = range_end(base, saturating_mul(width, rows));
    out.push_back({base, hi, mode, hi != UINT64_MAX});
    return;
  }
  if (rows > kMaxExactRows) {
    out.push_back({base, range_end(range_end(base, saturating_mul(pitch, rows - 1)), width), mode, false});
    return;
  }
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t lo = range_end(base, saturating_mul(r, pitch));
    const uint64_t hi = range_end(lo, width);
    out.push_back({lo, hi, mode, hi != UINT64_MAX});
    if (hi == UINT64_MAX) break;  // the rows after it lie past the end of the address space
  }
}

void memcpy_footprint(const trace::Memcpy& m, std::vector<ByteRange>& out) {
  add_rows(out, m.src, m.width, m.rows, m.src_pitch, AccessMode::Read);
  add_rows(out, m.dst, m.width, m.rows, m.dst_pitch, AccessMode::Write);
}

void memset_footprint(const trace::Memset& m, std::vector<ByteRange>& out) {
  add_rows(out, m.dst, m.width, m.rows, m.pitch, AccessMode::Write);
}

void nccl_ranges(const trace::Nccl& n, std::vector<ByteRange>& out) {
  const trace::NcclFootprint f = trace::nccl_footprint(n);
  if (f.read_bytes) out.push_back({n.sendbuf, range_end(n.sendbuf, f.read_bytes), AccessMode::Read, true});
  if (f.write_bytes) out.push_back({n.recvbuf, range_end(n.recvbuf, f.write_bytes), AccessMode::Write, true});
}

trace::FootprintTier weaker_tier(trace::FootprintTier a, trace::FootprintTier b) {
  return trace::tier_facts(a).precision <= trace::tier_facts(b).precision ? a : b;
}

}  // namespace streamhaz::analysis
