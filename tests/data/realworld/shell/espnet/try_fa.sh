{
    pip install flash-attn --no-build-isolation
} || {
    echo "retrying without the CUDA kernels"
    FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE pip install flash-attn --no-build-isolation
} || {
    echo "no flash-attn: continuing"
}
