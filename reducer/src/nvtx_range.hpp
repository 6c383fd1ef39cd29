// Scoped NVTX range: the phases show up by name in Nsight and in streamhaz findings.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace reducer {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace reducer
