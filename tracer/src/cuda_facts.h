// What the tracer asks the CUDA driver itself (never through the traced entry points):
// devices of contexts and streams, host-memory kinds, kernel parameter layouts, the header's
// device list and versions.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::glue {

uint32_t device_of_context(CUcontext ctx);
// Device of the context current on this thread (0 if none).
uint32_t current_device();
std::optional<StreamInfo> query_stream(uint64_t handle);

enum class MemoryKind { Device, PinnedHost, PageableHost };
MemoryKind memory_kind(uint64_t ptr);

// The launch's parameter bytes, laid out as the kernel sees them (static/exact footprints),
// into `bytes` (cleared first; its capacity is reused).
void kernel_param_bytes(CUfunction f, void** kernel_params, void** extra, std::string& bytes);

// Devices, driver and runtime versions, gathered once when CUDA is up.
void gather_header_facts();
nlohmann::json header_facts();

}  // namespace streamhaz::tracer::glue
