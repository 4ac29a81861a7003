// Correct host row sum with a different summation order: four float accumulators (what a
// vectorising compiler or a GPU tree reduction does). Agrees with the reference within
// float32 tolerances, not bit for bit.
#include <magpie/bench.hpp>

static void row_sum_blocked(const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float s[4] = {0, 0, 0, 0};
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4)
      for (int k = 0; k < 4; ++k) s[k] += row[c + k];
    for (; c < cols; ++c) s[0] += row[c];
    out[r] = (s[0] + s[1]) + (s[2] + s[3]);
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
    return [=] { row_sum_blocked(x, out, rows, cols); };
  });
}
