git clone https://github.com/Dao-AILab/flash-attention.git
pushd flash-attention/
git checkout ${PRETRAIN_FLASH_ATTENTION_VERSION}

# Use flash-attention 3
pushd hopper/

python setup.py install
