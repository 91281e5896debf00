#!/bin/bash
# The GPU checks, on a machine with a CUDA build of PyTorch (its python3): the gpu-marked tests,
# the control-flow and hybridization tests, then a short bench_cnn.py --gpu. Figures and logs go
# to $OUT (default ./gpu-check). Usage: tools/gpu_check.sh [seconds for the benchmark]
OUT=${OUT:-gpu-check}; mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } \
  2>&1 | tee "$OUT/machine.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 | tee "$OUT/gpu_tests.txt" | tail -15
timeout "${1:-200}" python3 benchmarks/bench_cnn.py --gpu --nets resnet --batch 128 --repeat 3 --no-inference 2>&1 \
  | tee "$OUT/bench_cnn_gpu.txt" | tail -40
