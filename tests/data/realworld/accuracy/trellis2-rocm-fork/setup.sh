ROOT=$(pwd)
if command -v nvidia-smi > /dev/null; then
    BACKEND="cuda"
else
    BACKEND="hip"
fi
if [ "$WITH_FA" = true ] ; then
    if [ "$BACKEND" = "cuda" ] ; then
        pip install flash-attn==2.7.3
    else
        # no ROCm wheels: build AMD's fork
        git clone --recursive https://github.com/ROCm/flash-attention.git /tmp/fa-rocm
        cd /tmp/fa-rocm
        git checkout tags/v2.7.3-cktile
        GPU_ARCHS=gfx942 python setup.py install
        cd $ROOT
    fi
fi
