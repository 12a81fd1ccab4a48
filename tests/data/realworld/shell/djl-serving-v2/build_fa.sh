git clone https://github.com/Dao-AILab/flash-attention.git fa2-src -b v2.0.0
pushd fa2-src || exit 1
pip install .
