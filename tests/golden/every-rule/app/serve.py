"""The batch server: decodes through transformers' continuous batching (the paged path)."""

from flash_attn import flash_attn_with_kvcache
from kernels import get_kernel
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/model", attn_implementation="flash_attention_3")
outputs = model.generate_batch(inputs=[[1, 2, 3]])
rotary = get_kernel("kernels-community/rotary")


def decode(q, k_cache, v_cache, lengths, blocks):
    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths, block_table=blocks)
