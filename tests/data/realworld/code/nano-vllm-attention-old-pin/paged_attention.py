# A fixture written for fa-lint's tests: a layer that calls flash-attn's paged kernels itself, the
# block table on flash_attn_varlen_func for prefill and on flash_attn_with_kvcache for decode.
from torch import nn

try:
    from flash_attn import flash_attn_varlen_func, flash_attn_with_kvcache
except ImportError:
    flash_attn_varlen_func = flash_attn_with_kvcache = None


class PagedAttention(nn.Module):
    def forward(self, q, k, v, meta):
        if meta.prefill:
            return flash_attn_varlen_func(q, k, v, cu_seqlens_q=meta.cu_q, cu_seqlens_k=meta.cu_k,
                                          max_seqlen_q=meta.max_q, max_seqlen_k=meta.max_k,
                                          causal=True, block_table=meta.blocks)
        return flash_attn_with_kvcache(q.unsqueeze(1), self.k_cache, self.v_cache,
                                       cache_seqlens=meta.lens, block_table=meta.blocks, causal=True)
