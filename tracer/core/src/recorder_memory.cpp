// Recorder, memory: allocations, frees and buffer names (the allocation index the pointer
// tier scans launch arguments against).
#include "streamhaz/tracer/recorder.h"

#include <algorithm>
#include <utility>

namespace streamhaz::tracer {

using namespace streamhaz::trace;

void Recorder::allocated(AllocKind kind, uint64_t ptr, uint64_t bytes, uint32_t device,
                         std::optional<StreamRef> stream) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream ? stream_id(t, *stream) : 0;  // before the seq: it may create the stream
    emit(Alloc{next_seq(), ptr, bytes, device, kind, st});
    allocations_.add(ptr, bytes);
  });
}

void Recorder::freed(AllocKind kind, uint64_t ptr, std::optional<StreamRef> stream) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream ? stream_id(t, *stream) : 0;
    emit(Free{next_seq(), ptr, kind, st});
    allocations_.remove(ptr);
  });
}

void Recorder::buffer_named(uint64_t ptr, uint64_t bytes, std::string_view name) {
  on_thread([&](ThreadState&) { emit(BufferName{ptr, bytes, intern(name)}); });
}

}  // namespace streamhaz::tracer
