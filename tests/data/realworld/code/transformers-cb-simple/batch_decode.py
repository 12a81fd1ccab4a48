# A fixture written for fa-lint's tests: a script that decodes through continuous batching with the
# attention implementation a command-line option names (a Hub kernel by default).
import argparse

import torch
from transformers import AutoModelForCausalLM

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn", type=str, default="kernels-community/flash-attn")
    parser.add_argument("--prompts", type=int, default=8)
    args = parser.parse_args()

    model = AutoModelForCausalLM.from_pretrained(
        "some-org/tiny-chat",
        attn_implementation=args.attn,
        dtype=torch.bfloat16,
    )
    outputs = model.generate_batch(inputs=[[1, 2, 3]] * args.prompts)
    print(len(outputs))
