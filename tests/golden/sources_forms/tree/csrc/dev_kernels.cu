// Fixture: a same-file kernel macro in NCCL's style (the name is a literal prefix + parameter).
struct DevArgs {
  int n;
};

#define DEFINE_DEV_KERNEL(suffix, coll) \
  __global__ void devKernel_##suffix(DevArgs const args) { (void)args; }

DEFINE_DEV_KERNEL(AllReduce_Sum_f32_RING_LL, 0)
DEFINE_DEV_KERNEL(AllGather_RING_LL, 1)
