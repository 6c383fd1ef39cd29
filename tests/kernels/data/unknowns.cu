// Pointers inside a struct parameter: the summary cannot describe them.
struct Args {
  float* out;
  int n;
};
__global__ void struct_member(Args args) {
  int i = threadIdx.x;
  if (i < args.n) args.out[i] = 0.0f;
}

// A pointer loaded from memory.
__global__ void pointer_table(float* const* table, int n) {
  int i = threadIdx.x;
  if (i < n) table[i][0] = 1.0f;
}

// A function the scan cannot see at all (no declaration): the body has errors.
__global__ void undeclared_call(float* out, const float* in) { out[0] = not_declared_anywhere(in); }
