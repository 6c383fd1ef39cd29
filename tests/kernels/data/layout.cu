// Each parameter at its natural alignment, in order.
struct __attribute__((aligned(16))) Vec4 {
  float x, y, z, w;
};
enum class Mode : unsigned char { Fast, Exact };
__global__ void mixed(char c, double d, short s, float* p, int n, Vec4 v, Mode m, bool flag, unsigned long long u) {
  if (threadIdx.x == 0 && flag) p[0] = c + d + s + n + v.x + static_cast<int>(m) + u;
}

extern "C" __global__ void plain_c(int* out) { out[0] = 1; }

namespace outer {
namespace {
__global__ void hidden(float* p) { p[0] = 1.0f; }
}  // namespace
}  // namespace outer
