git clone https://github.com/Dao-AILab/flash-attention.git
pushd flash-attention/
git checkout ${FA_REF}

# the Hopper build lives in its own folder
pushd hopper/
python setup.py install
