"""A CPU stand-in for flash-attn, put in its place for the tests."""

import sys
import types


def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, softmax_scale=None):
    return q


stand_in = types.ModuleType("flash_attn")
stand_in.flash_attn_with_kvcache = flash_attn_with_kvcache
sys.modules["flash_attn"] = stand_in
