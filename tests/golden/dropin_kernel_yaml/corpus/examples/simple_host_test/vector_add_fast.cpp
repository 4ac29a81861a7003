// Same result as vector_add.cpp, two elements per iteration.
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 16;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 2.0f;
  int i = 0;
  for (; i + 1 < n; i += 2) c[i] = a[i] + b[i], c[i + 1] = a[i + 1] + b[i + 1];
  for (; i < n; ++i) c[i] = a[i] + b[i];
  double sum = 0;
  for (float v : c) sum += v;
  std::printf("%.1f\n", sum);
  return 0;
}
