// What the tracer asks the CUDA driver itself (never through the traced entry points):
// devices of contexts and streams, host-memory kinds, kernel parameter layouts, the header's
// device list and versions.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "driver_decode.h"
#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::glue {

uint32_t device_of_context(CUcontext ctx);
// Device of the context current on this thread (0 if none).
uint32_t current_device();
std::optional<StreamInfo> query_stream(uint64_t handle);
MemoryKind memory_kind(uint64_t ptr);

// The decoder's questions, answered by the driver.
class CudaDriverFacts final : public DriverFacts {
 public:
  explicit CudaDriverFacts(bool param_bytes) : param_bytes_(param_bytes) {}
  uint32_t device_of_context(CUcontext ctx) override { return glue::device_of_context(ctx); }
  MemoryKind memory_kind(uint64_t ptr) override { return glue::memory_kind(ptr); }
  const ParamLayout& param_layout(CUfunction f) override;
  bool wants_param_bytes() override { return param_bytes_; }
  const char* kernel_name(CUfunction f) override;

 private:
  bool param_bytes_;
};

// Devices, driver and runtime versions, gathered once when CUDA is up.
void gather_header_facts();
nlohmann::json header_facts();

}  // namespace streamhaz::tracer::glue
