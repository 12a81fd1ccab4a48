abi=$(python -c "import torch; print(torch.compiled_with_cxx11_abi())")
abi=${abi^^}
pip install flash_attn-2.3.2+cu118torch2.1cxx11abi${abi}-cp310-cp310-linux_x86_64.whl
