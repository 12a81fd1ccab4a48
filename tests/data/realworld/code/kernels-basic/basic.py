# huggingface/kernels examples/basic.py at 1375c4251746f2d2fcf68be461a8e8fc2d203912 (lines 1-8 as they were; the rest cut)
import torch

from kernels import get_kernel

print("Starting examples/basic.py demo")

# Download optimized kernels from the Hugging Face hub
activation = get_kernel("kernels-community/activation", version=1)
