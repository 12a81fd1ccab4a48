"""fa-lint: find flash-attn pins too old for paged-KV attention before they reach a GPU."""

# No import here: `python -m fa_lint` runs this before ``__main__`` takes the checked folder off
# ``sys.path``, so a module imported here could be the checkout's own (``__future__.py``: reliability/55).
__version__ = "0.1.0"
