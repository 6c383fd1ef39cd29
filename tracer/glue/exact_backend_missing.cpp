// A tracer built without the Compute Sanitizer API headers has no exact footprint tier.
#include "exact_backend.h"

namespace streamhaz::tracer::glue {

bool start_exact_backend(ExactLaunches, uint32_t, std::string& why_not) {
  why_not = "this tracer was built without the Compute Sanitizer API, so it has no exact footprint tier "
            "(rebuild where compute-sanitizer/include exists)";
  return false;
}

std::string exact_backend_summary() { return {}; }

}  // namespace streamhaz::tracer::glue
