# Sourced by the scripts that run a bundle (bundle.sh) on a GPU machine, with $bundle set to the
# bundle's folder: GPUs numbered as nvidia-smi numbers them, and LD_LIBRARY_PATH holding the
# bundle's libraries and the CUDA 13 libraries the machine has (toolkit or Python wheels), since
# cuBLASLt and NCCL are dlopen'ed.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
libs=$bundle/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  $(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
  # Either library may be in a folder of its own (the wheels put cuBLAS and NCCL apart).
  if compgen -G "$d/libcublasLt.so.13*" >/dev/null || compgen -G "$d/libnccl.so.2*" >/dev/null; then
    libs=$libs:$d
  fi
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
