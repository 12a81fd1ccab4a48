#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gpus-per-task=a100:1
#SBATCH --time=08:00:00

module load python/3.12
python -m venv env
source ./env/bin/activate
python -m pip install -r requirements.txt
MAX_JOBS=4 python -m pip install flash-attn --no-build-isolation

python train.py
