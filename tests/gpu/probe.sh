#!/usr/bin/env bash
# Device probe: what the GPU machine has (drivers, tools, libraries) and whether the magpie
# binary built on Debian 12 runs there. Prints facts only; exit 77 without a GPU.
set -u
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
nvidia-smi --query-gpu=index,name,memory.total,compute_cap,driver_version,clocks.sm,clocks.max.sm --format=csv
nvcc --version | tail -1
python3 -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "L2", torch.cuda.get_device_properties(0).L2_cache_size)'
command -v ncu && ncu --version | tail -1
ls -d /usr/local/cuda* 2>/dev/null
find / -name 'libcupti.so*' -not -path '/proc/*' 2>/dev/null | head
uname -r; grep -m1 'model name' /proc/cpuinfo; nproc
if [ -x build/magpie ]; then ldd build/magpie; build/magpie --version; build/magpie --gpu-info; fi
