// The kernel exists only with -DWITH_KERNEL: extra clang arguments follow `--`.
#ifdef WITH_KERNEL
__global__ void only_with_define(float* out) { out[0] = 1.0f; }
#endif
