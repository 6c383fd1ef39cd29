// Recorder, streams and events: creation, names, records and waits, and the host's
// synchronisations and queries.
#include "streamhaz/tracer/recorder.h"

#include <algorithm>
#include <utility>

namespace streamhaz::tracer {

using namespace streamhaz::trace;

void Recorder::stream_created(uint64_t handle, uint32_t device, uint32_t flags, int32_t priority) {
  on_thread([&](ThreadState&) {
    streams_.erase(StreamKey{handle, 0, 0});  // a reused handle is a new stream
    ++streams_epoch_;
    new_stream(StreamKey{handle, 0, 0}, device, flags, priority);
  });
}

void Recorder::stream_destroyed(uint64_t handle) {
  TimedLock lock(mu_);
  if (handle > kHandlePerThreadStream && streams_.erase(StreamKey{handle, 0, 0})) ++streams_epoch_;
}

void Recorder::stream_named(StreamRef s, std::string_view name) {
  on_stream(s, [&](StreamId st) { return StreamName{st, intern(name)}; });
}

void Recorder::event_created(uint64_t event, uint32_t flags) {
  on_thread([&](ThreadState&) {
    EventId id = next_event_++;
    events_[event] = id;
    ++events_epoch_;  // a reused handle is a new event
    emit(EventCreate{id, flags});
  });
}

void Recorder::event_destroyed(uint64_t event) {
  TimedLock lock(mu_);
  if (events_.erase(event)) ++events_epoch_;
}

void Recorder::event_recorded(uint64_t event, StreamRef s) {
  on_event_and_stream(event, s, [&](EventId e, StreamId st) { return EventRecord{next_seq(), e, st}; });
}

void Recorder::event_waited(StreamRef s, uint64_t event) {
  on_event_and_stream(event, s, [&](EventId e, StreamId st) { return EventWait{next_seq(), st, e}; });
}

void Recorder::event_synchronized(uint64_t event) {
  on_event(event, [&](EventId e) { return EventSync{next_seq(), e}; });
}

void Recorder::event_queried(uint64_t event, bool complete) {
  on_event(event, [&](EventId e) { return EventQuery{next_seq(), e, complete}; });
}

void Recorder::stream_synchronized(StreamRef s) {
  on_stream(s, [&](StreamId st) { return StreamSync{next_seq(), st}; });
}

void Recorder::stream_queried(StreamRef s, bool complete) {
  on_stream(s, [&](StreamId st) { return StreamQuery{next_seq(), st, complete}; });
}

void Recorder::device_synchronized(uint32_t device) {
  on_thread([&](ThreadState&) { emit(DeviceSync{next_seq(), device}); });
}

}  // namespace streamhaz::tracer
