// Stream capture and graph launch: operations issued on a capturing stream do not run;
// they are kept with their graph and applied at each cudaGraphLaunch, on timelines of
// their own (one per captured stream, "branches"), started after the work before the
// launch on the launch stream and joined back into it afterwards.
#include "engine/rank_engine.h"

#include <algorithm>

namespace streamhaz::analysis {

RankEngine::CapturedGraph* RankEngine::captured_open(const trace::Record& r, trace::StreamId id) {
  const StreamState& s = stream(id);
  if (!s.capturing) return nullptr;
  auto it = graphs_.find(s.capturing);
  if (it == graphs_.end() || !it->second.open) return nullptr;
  CapturedGraph& g = it->second;
  g.records.push_back(r);
  if (std::find(g.streams.begin(), g.streams.end(), id) == g.streams.end()) g.streams.push_back(id);
  return &g;
}

// A capture opens under a key of its own: a plain cudaStreamBeginCapture names no graph (the
// graph exists only once cudaStreamEndCapture returns it), and a stream's capture ends on the
// stream it began on.
void RankEngine::on(const trace::CaptureBegin& r) {
  StreamState& s = stream(r.stream);
  if (s.capturing) return;  // CUDA refuses a second capture on a capturing stream
  const trace::GraphId key = kCaptureKeyBit | ++captures_begun_;
  CapturedGraph& g = graphs_[key];
  g.open = true;
  g.into = r.graph;
  g.streams.push_back(r.stream);
  s.capturing = key;
  ++open_captures_;
}

// The capture becomes the graph the record names (or, captured into an existing graph, adds to
// it). Every stream it had joined stops capturing. A capture that ended without a graph (it was
// invalidated) leaves nothing to launch.
void RankEngine::on(const trace::CaptureEnd& r) {
  const trace::GraphId key = stream(r.stream).capturing;
  if (!key) return;
  for (StreamState& s : streams_)
    if (s.capturing == key) s.capturing = 0;
  auto it = graphs_.find(key);
  if (it == graphs_.end()) return;
  CapturedGraph g = std::move(it->second);
  graphs_.erase(it);
  --open_captures_;
  const trace::GraphId id = r.graph ? r.graph : g.into;
  if (!id || (id & kCaptureKeyBit)) return;
  g.open = false;
  auto existing = graphs_.find(id);
  if (g.into && existing != graphs_.end()) {  // cuStreamBeginCaptureToGraph: nodes added to the graph
    CapturedGraph& target = existing->second;
    target.records.insert(target.records.end(), g.records.begin(), g.records.end());
    for (trace::StreamId st : g.streams)
      if (std::find(target.streams.begin(), target.streams.end(), st) == target.streams.end())
        target.streams.push_back(st);
    return;
  }
  graphs_[id] = std::move(g);  // a new graph (an id the tracer reuses replaces the old graph)
}

void RankEngine::on(const trace::GraphLaunch& r) {
  if (replaying_ || captured(*current_, r.op.stream)) return;  // graphs inside graphs: not modelled
  const uint32_t slot = slot_of(r.op.stream);
  enqueue(slot);
  ++operations_;
  replay(r.graph, slot);
}

void RankEngine::replay(trace::GraphId id, uint32_t launch_slot) {
  auto it = graphs_.find(id);
  if (it == graphs_.end() || it->second.open) return;
  CapturedGraph& g = it->second;
  // Branch timelines persist across launches: launches of one graph run one after another.
  for (trace::StreamId captured_stream : g.streams) {
    if (g.branch.count(captured_stream)) continue;
    const StreamState& origin = stream(captured_stream);
    const trace::StringId name = origin.name;
    const uint32_t slot = new_slot(captured_stream, streams_[launch_slot].device, trace::kStreamNonBlocking, false);
    streams_[slot].name = name;
    streams_[slot].graph = id;
    g.branch[captured_stream] = slot;
  }
  for (const auto& [sid, slot] : g.branch) streams_[slot].clock.join(streams_[launch_slot].clock);

  replaying_ = &g;
  replay_events_.clear();
  for (const trace::Record& rec : g.records) apply(rec);
  flush_pending();
  replaying_ = nullptr;

  // Work issued on the launch stream after the launch waits for the whole graph.
  for (const auto& [sid, slot] : g.branch) streams_[launch_slot].clock.join(streams_[slot].clock);
}

}  // namespace streamhaz::analysis
