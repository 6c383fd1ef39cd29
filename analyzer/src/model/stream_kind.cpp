#include "model/stream_kind.h"

namespace streamhaz::analysis {

StreamKinds stream_kinds(const std::vector<trace::Record>& recs) {
  StreamKinds k;
  for (const trace::Record& r : recs) {
    if (const auto* c = std::get_if<trace::StreamCreate>(&r)) k.created[c->stream] = {c->device, c->flags};
    if (const trace::OpCommon* op = trace::op_common(r))
      if (k.blocking(op->stream)) k.blocking_used.insert(k.device(op->stream));
  }
  return k;
}

}  // namespace streamhaz::analysis
