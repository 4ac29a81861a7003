// Host stand-in for Magpie's simple_hip_test vector_add: prints the checksum of a + b so the
// testcase script can judge it by exit code (Magpie's testcase backend).
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 16;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 2.0f;
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  double sum = 0;
  for (float v : c) sum += v;
  std::printf("%.1f\n", sum);
  return 0;
}
