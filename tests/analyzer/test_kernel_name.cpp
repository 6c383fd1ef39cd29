// Kernel names for people: demangled, return type and parameters dropped, deep template
// arguments folded; anything that is not a mangled name is left as it is.
#include <catch2/catch.hpp>

#include "streamhaz/analysis/kernel_name.h"

using streamhaz::analysis::readable_kernel_name;

TEST_CASE("kernel names: mangled names read as their function", "[kernel-name]") {
  CHECK(readable_kernel_name("_Z4fillPfl") == "fill");
  CHECK(readable_kernel_name("_ZN7reducer43_GLOBAL__N__3a075992_10_kernels_cu_d5b03bde9predivideEPflf") ==
        "reducer::(anonymous namespace)::predivide");
  // PyTorch's fill kernel: the functor stays, its own template arguments fold.
  CHECK(readable_kernel_name("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_") ==
        "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>, std::array<...> >");
}

TEST_CASE("kernel names: unmangled or undemanglable names stay as they are", "[kernel-name]") {
  CHECK(readable_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(readable_kernel_name("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n") == "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n");
  CHECK(readable_kernel_name("_Zgarbage") == "_Zgarbage");
  CHECK(readable_kernel_name("") == "");
}

TEST_CASE("kernel names: very long names are cut to 160 characters", "[kernel-name]") {
  std::string mangled = "_Z";
  std::string ident(300, 'k');
  mangled += std::to_string(ident.size()) + ident + "v";
  const std::string shown = readable_kernel_name(mangled);
  CHECK(shown.size() == 160);
  CHECK(shown.ends_with("..."));
}
