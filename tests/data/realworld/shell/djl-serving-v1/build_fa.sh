git clone -b v1.0.0 https://github.com/HazyResearch/flash-attention.git
pushd flash-attention || exit 1
python setup.py install
cd csrc/rotary && python setup.py install
