ROOT=$(pwd)
BACKEND=$(python -c "import torch; print('cuda' if torch.version.cuda else 'hip')")
if [ "$WITH_FA" = true ] ; then
    if [ "$BACKEND" = "cuda" ] ; then
        pip install flash-attn
    elif [ "$BACKEND" = "hip" ] ; then
        # no ROCm wheels: build AMD's fork
        git clone --recursive https://github.com/ROCm/flash-attention.git /tmp/fa-rocm
        cd /tmp/fa-rocm
        git checkout tags/v2.6.3-cktile
        GPU_ARCHS=gfx942 python setup.py install
        cd $ROOT
    fi
fi
