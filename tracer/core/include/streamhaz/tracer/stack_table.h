// Call stacks in the trace: the glue captures the calling thread's frames as raw addresses (a
// CPython code object and instruction offset, or a native return address); the StackTable
// turns them into FrameDef/ModuleDef/CallsiteDef records the first time it sees them and into
// one call-site id after that. A call site is a node of a tree (frame, called from parent), so
// stacks that share their outer frames share their records.
//
// The hot path (a stack seen before) hashes the raw frames and compares them with the stored
// copy: no allocation, no names. Names are read only for new frames (describe_python) and
// modules only for new native frames (module_of).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"
#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/path_prefix_map.h"

namespace streamhaz::tracer {

// Which frames a record wants: operations want the program's frames; records that name a
// thing for later (allocations, stream creation) also want the native library that made the
// call (PyTorch's caching allocator, NCCL); kernel launches are the most frequent.
enum class StackNeed : uint8_t { Operation, KernelLaunch, Origin };

struct RawFrame {
  trace::FrameKind kind = trace::FrameKind::Native;
  uint64_t key = 0;     // Python: the code object's address; native: the return address
  int64_t detail = 0;   // Python: instruction offset in code units (-1: not started); native: 0
  uint64_t check = 0;   // Python: the code's file-name object (a freed code object's address
                        // reused by another file is another frame); native: 0
  bool operator==(const RawFrame&) const = default;
};

inline constexpr size_t kMaxStackFrames = 64;

struct PythonFrameInfo {
  std::string file;
  std::string function;
  uint32_t line = 0;
};

struct ModuleInfo {
  std::string path;
  uint64_t base = 0;
  uint64_t size = 0;
  std::string build_id;  // lowercase hex, empty: none
};

// The glue's side: the calling thread's stack, and what its frames are.
class StackSource {
 public:
  virtual ~StackSource() = default;
  // The calling thread's frames, innermost first; returns how many were written to `out`.
  virtual size_t capture(StackNeed need, RawFrame* out, size_t max) = 0;
  // File, function and line of a Python frame (called once per new frame).
  virtual PythonFrameInfo describe_python(const RawFrame& frame) = 0;
  // The loaded object that holds `pc` (called once per new native frame outside known modules).
  virtual std::optional<ModuleInfo> module_of(uint64_t pc) = 0;
};

class StackTable {
 public:
  using Emit = std::function<void(const trace::Record&)>;
  using Intern = std::function<trace::StringId(std::string_view)>;
  // `emit` writes a definition record, `intern` a string; both under the recorder's lock.
  StackTable(Emit emit, Intern intern, size_t max_callsites = kMaxCallsites, PathPrefixMap paths = {})
      : emit_(std::move(emit)), intern_(std::move(intern)), max_callsites_(max_callsites), paths_(std::move(paths)) {}

  // The call site of `frames` (innermost first), defining what is new; 0 for no frames or
  // once the table is full (max_callsites: a program generating code without end).
  STREAMHAZ_HOT trace::CallsiteId intern(std::span<const RawFrame> frames, StackSource& source);

  // The call site of frames known only by name (innermost first): a stack another recorder
  // took, such as PyTorch's allocator history. Frames of equal file, function and line share
  // one FrameDef; 0 for no frames or a full table.
  trace::CallsiteId intern_named(std::span<const PythonFrameInfo> frames);

  size_t callsites() const { return callsites_.size(); }
  size_t frames() const { return next_frame_ - 1; }
  uint64_t refused() const { return refused_; }

  static constexpr size_t kMaxCallsites = size_t(1) << 22;

 private:
  struct FrameHash {
    size_t operator()(const RawFrame& f) const;
  };
  // A whole stack by its 128-bit hash (two independent lanes), in a flat open-addressing
  // table: one probe, usually one cache line, where comparing the stored frames read up to
  // 2 KiB per call. Two stacks of one hash are as likely as 2^-128.
  struct StackSlot {
    uint64_t a = 0, b = 0;
    trace::CallsiteId id = 0;  // 0: empty
  };
  StackSlot& slot_of(uint64_t a, uint64_t b);  // the slot holding (a, b), else the empty one where it goes
  void grow_stacks();
  struct Module {
    uint64_t base = 0, end = 0;
    trace::ModuleId id = 0;
  };

  trace::FrameId frame_id(const RawFrame& f, StackSource& source);
  trace::FrameId named_frame_id(const PythonFrameInfo& f);
  trace::ModuleId module_id(uint64_t pc, StackSource& source, uint64_t& base);
  trace::CallsiteId callsite(trace::CallsiteId parent, trace::FrameId frame);

  Emit emit_;
  Intern intern_;
  size_t max_callsites_;
  PathPrefixMap paths_;  // rewrites file and module paths before they are interned
  std::vector<StackSlot> stack_slots_ = std::vector<StackSlot>(1024);  // a power of two
  size_t stack_count_ = 0;
  std::unordered_map<RawFrame, trace::FrameId, FrameHash> frames_;
  // Python frames by (code, file object, line): instruction offsets of one line share a frame.
  std::unordered_map<RawFrame, trace::FrameId, FrameHash> python_lines_;
  std::unordered_map<std::string, trace::FrameId> named_frames_;  // "file\0function\0line"
  std::unordered_map<uint64_t, trace::CallsiteId> callsites_;  // parent << 32 | frame
  std::vector<Module> modules_;                                // sorted by base
  trace::FrameId next_frame_ = 1;
  uint64_t refused_ = 0;
};

}  // namespace streamhaz::tracer
