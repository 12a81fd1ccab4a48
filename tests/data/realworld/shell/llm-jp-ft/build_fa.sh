pushd ${PREFIX}/src

git clone https://github.com/Dao-AILab/flash-attention -b v${FA_VERSION}
pushd flash-attention
python -m pip install -e .
popd
