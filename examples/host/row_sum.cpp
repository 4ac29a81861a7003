// Reference host row sum of a float32 matrix: out[r] = sum_c x[r, c], summed left to right
// in double and rounded once; x is uniform on [0, 1). Floating-point order matters, so candidates are checked
// against tolerances, not bit-exact.
#include <magpie/bench.hpp>

static void row_sum(const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += x[r * cols + c];
    out[r] = static_cast<float>(s);
  }
}

int main(int argc, char** argv) {
  magpie::bench::harness h("row_sum");
  h.sizes({{"7x33", {7, 33}}, {"100x1001", {100, 1001}}, {"1024x4096", {1024, 4096}}});
  return h.run(argc, argv, [](magpie::bench::trial& t) {
    const int64_t rows = t.dim(0), cols = t.dim(1);
    const float* x = t.input<float>("x", {rows, cols}, magpie::bench::uniform(0, 1));
    float* out = t.output<float>("out", {rows});
    t.scalar("rows", static_cast<double>(rows));
    t.scalar("cols", static_cast<double>(cols));
    return [=] { row_sum(x, out, rows, cols); };
  });
}
