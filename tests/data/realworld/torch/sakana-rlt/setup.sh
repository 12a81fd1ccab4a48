#!/bin/bash

pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124
pip install vllm==0.8.3 rich
pip install flash-attn --no-build-isolation
