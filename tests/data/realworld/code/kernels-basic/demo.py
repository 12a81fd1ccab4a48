# A fixture written for fa-lint's tests: a Hub kernel pinned to a version.
from kernels import get_kernel

act = get_kernel("kernels-community/activation", version=1)
