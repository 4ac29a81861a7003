// Does not compile (on purpose): the Slurm failure test expects its job to report the compile error.
#include <magpie/bench.hpp>
int main() { return this_is_not_declared; }
