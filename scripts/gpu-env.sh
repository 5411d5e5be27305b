# gpu-env.sh - source on a GPU node: build and run against the NCCL that
# matches cuco's headers (2.28.9 from the Python wheel when present; the
# system copy may be older, and the device API's structs must match the
# library), NVSHMEM from its wheel (nvidia-nvshmem-cu13; its host library
# loads its bootstrap and transport plugins from its lib/), and never use
# NVLink multicast.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)
if [ -n "$site" ] && [ -f "$site/nvidia/nccl/lib/libnccl.so.2" ]; then
	export CUCO_NCCL_HOME="$site/nvidia/nccl"
	export LD_LIBRARY_PATH="$site/nvidia/nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -n "$site" ] && [ -f "$site/nvidia/nvshmem/lib/libnvshmem_host.so.3" ]; then
	export CUCO_NVSHMEM_HOME="$site/nvidia/nvshmem"
	export LD_LIBRARY_PATH="$site/nvidia/nvshmem/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1
