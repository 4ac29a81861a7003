#include "gpu/nvml_procs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace magpie;

TEST(nvml_procs, a_forked_child_is_ours_init_is_not) {
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  EXPECT_TRUE(gpu::is_own_descendant(child));
  EXPECT_TRUE(gpu::is_own_descendant(::getpid()));
  EXPECT_FALSE(gpu::is_own_descendant(1));
  EXPECT_FALSE(gpu::is_own_descendant(::getppid()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST(nvml_procs, without_nvml_the_reason_is_given) {
  gpu::gpu_processes g = gpu::list_gpu_compute_processes();
  if (g.available) GTEST_SKIP() << "NVML is here: " << g.processes.size() << " compute processes";
  EXPECT_FALSE(g.why.empty());
  EXPECT_TRUE(g.processes.empty());
}
