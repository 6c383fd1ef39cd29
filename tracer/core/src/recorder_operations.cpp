// Recorder, operations: kernel launches (their pointer arguments and exact footprints), copies,
// memsets, host functions, graph launches and stream capture.
#include "streamhaz/tracer/recorder.h"

#include <algorithm>
#include <utility>

#include "streamhaz/tracer/launch_memo.h"
#include "streamhaz/tracer/operand_roles.h"

namespace streamhaz::tracer {

using namespace streamhaz::trace;

// NCCL's own kernel: the Nccl record(s) stand for it; it only lends them its timing.
void Recorder::lend_to_nccl(ThreadState& t, StreamRef s, uint64_t correlation) {
  StreamId st = stream_id(t, s);
  bool any_on_stream = false;
  for (const Nccl& n : t.claimants) any_on_stream |= n.op.stream == st;
  for (const Nccl& n : t.claimants) {
    if (!any_on_stream || n.op.stream == st) expect_activity(correlation, n.op.seq);
  }
}

void Recorder::kernel_launched(StreamRef s, uint64_t correlation, const KernelLaunch& k) {
  TimedLock lock(mu_);
  ThreadState& t = thread_state();
  if (t.nccl_depth > 0 && !t.claimants.empty()) return lend_to_nccl(t, s, correlation);
  if (!hold_kernels_) return emit_kernel(t, s, correlation, k, nullptr);
  ThreadState::HeldLaunch& h = t.held_launch;
  h.active = true;
  h.stream = s;
  h.correlation = correlation;
  h.function = k.function;
  h.name.assign(k.name.view());
  std::copy(k.grid, k.grid + 3, h.grid);
  std::copy(k.block, k.block + 3, h.block);
  h.shared_mem = k.shared_mem;
  h.params.assign(k.params.data(), k.params.size());
  h.layout = k.layout;
}

void Recorder::release_kernel(const std::vector<KernelRange>* ranges, trace::FootprintTier tier) {
  TimedLock lock(mu_);
  // Looked up without thread_state(): a thread with nothing held must not leave a HostThread.
  auto it = threads_.find(current_thread_id());
  if (it == threads_.end() || !it->second.held_launch.active) return;
  ThreadState& t = thread_state();
  ThreadState::HeldLaunch& h = t.held_launch;
  h.active = false;
  KernelLaunch k;
  k.function = h.function;
  k.name = std::string_view(h.name);
  std::copy(h.grid, h.grid + 3, k.grid);
  std::copy(h.block, h.block + 3, k.block);
  k.shared_mem = h.shared_mem;
  k.params = h.params;
  k.layout = h.layout;
  emit_kernel(t, h.stream, h.correlation, k, ranges, tier);
}

bool Recorder::held_launch_key(LaunchKey& key) {
  TimedLock lock(mu_);
  auto it = threads_.find(current_thread_id());
  if (it == threads_.end() || !it->second.held_launch.active) return false;
  const ThreadState::HeldLaunch& h = it->second.held_launch;
  key.function = h.function;
  std::copy(h.grid, h.grid + 3, key.grid);
  std::copy(h.block, h.block + 3, key.block);
  key.shared_mem = h.shared_mem;
  key.params.assign(h.params);
  return true;
}

bool Recorder::holds_kernel() {
  TimedLock lock(mu_);
  auto it = threads_.find(current_thread_id());  // no HostThread record for a question
  return it != threads_.end() && it->second.held_launch.active;
}

void Recorder::emit_kernel(ThreadState& t, StreamRef s, uint64_t correlation, const KernelLaunch& k,
                           const std::vector<KernelRange>* exact, trace::FootprintTier exact_tier) {
  Kernel& rec = std::get<Kernel>(kernel_record_);
  const KernelFunction function = kernel_function(k);  // before op_common: a StringDef precedes the stream's records
  rec.name = function.name;
  rec.op = op_common(t, s);
  for (int i = 0; i < 3; ++i) {
    rec.grid[i] = k.grid[i];
    rec.block[i] = k.block[i];
  }
  rec.shared_mem = k.shared_mem;
  if (kernel_arguments_ == KernelArguments::PointersAndBytes) rec.params.assign(k.params.data(), k.params.size());
  else rec.params.clear();
  expect_activity(correlation, rec.op.seq);
  emit(kernel_record_);
  if (kernel_arguments_ != KernelArguments::Drop) {
    PhaseTimer timer(Phase::PointerScan);
    std::string_view params = k.params;
    if (function.unfilled_slots >= 0) {
      // Slots the launch did not fill are read as zeros (no pointer).
      const auto [begin, end] = unfilled_slot_bytes(k.layout, function.unfilled_slots, k.grid[1], params.size());
      if (end > begin) {
        filled_params_.assign(params.data(), params.size());
        std::fill(filled_params_.begin() + begin, filled_params_.begin() + end, '\0');
        params = filled_params_;
      }
    }
    // Grown, never shrunk: a launch after a larger one writes into room already there.
    if (pointers_.size() < params.size() / 8) pointers_.resize(params.size() / 8);
    const std::span<const uint64_t> pointers(pointers_.data(), allocations_.pointers_in(params, pointers_.data()));
    if (!pointers.empty()) {
      operand_roles(params, k.layout, function.operand_array, pointers, pointer_roles_);
      if (!stopped_) sink_.add_pointer_accesses(rec.op.seq, pointers, pointer_roles_, FootprintTier::Pointer);
    }
  }
  if (exact)
    for (const KernelRange& r : *exact) {
      if (r.hi <= r.lo) continue;
      if (!r.coarse) {
        emit(Access{rec.op.seq, r.lo, r.hi - r.lo, r.mode, exact_tier});
        continue;
      }
      cut_scratch_.clear();
      allocations_.cut(r.lo, r.hi, cut_scratch_);
      for (const auto& [lo, hi] : cut_scratch_) emit(Access{rec.op.seq, lo, hi - lo, r.mode, FootprintTier::Coarse});
    }
  if (kernel_stack_.seq == rec.op.seq && kernel_stack_.callsite != 0) {
    sink_.add(kernel_stack_);
    kernel_stack_ = StackRef{};
  }
}

void Recorder::memcpy_issued(StreamRef s, uint64_t correlation, Memcpy m) { issue(s, correlation, m); }

void Recorder::memset_issued(StreamRef s, uint64_t correlation, Memset m) { issue(s, correlation, m); }

void Recorder::host_func_launched(StreamRef s) {
  HostFunc h;
  issue(s, /*correlation=*/0, h);
}

void Recorder::graph_instantiated(uint64_t exec, uint64_t graph) {
  TimedLock lock(mu_);
  auto it = graph_of_handle_.find(graph);
  graph_of_exec_[exec] = it != graph_of_handle_.end() ? it->second : 0;  // 0: a graph not captured
}

void Recorder::graph_launched(StreamRef s, uint64_t correlation, uint64_t exec) {
  on_thread([&](ThreadState& t) {
    GraphLaunch g;
    g.op = op_common(t, s);
    auto it = graph_of_exec_.find(exec);
    g.graph = it != graph_of_exec_.end() ? it->second : 0;
    // Every node of the graph reports this correlation: keep the entry for all of them.
    if (will_get_activity(correlation)) many_ops_[correlation] = ManyOps{{g.op.seq}, true};
    emit(g);
  });
}

void Recorder::capture_began(StreamRef s, uint64_t into) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream_id(t, s);
    GraphId graph = 0;  // a plain capture: its graph is known only at the end
    if (into) {
      auto [it, fresh] = graph_of_handle_.try_emplace(into, next_graph_);
      if (fresh) ++next_graph_;
      graph = it->second;
      capturing_into_[st] = graph;
    }
    emit(CaptureBegin{next_seq(), st, graph});
  });
  open_captures_.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::capture_ended(StreamRef s, uint64_t graph) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream_id(t, s);
    GraphId serial = 0;
    if (auto into = capturing_into_.find(st); into != capturing_into_.end()) {
      serial = graph ? into->second : 0;  // added to the graph it named
      capturing_into_.erase(into);
    } else if (graph) {
      serial = next_graph_++;
      graph_of_handle_[graph] = serial;
    }
    emit(CaptureEnd{next_seq(), st, serial});
  });
  if (open_captures_.load(std::memory_order_relaxed) > 0) open_captures_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace streamhaz::tracer
