"""What the project runs, read from its code and never run: the paged path, the attention
implementation it asks for, the kernels it loads, its own calls into flash-attn and the kernels it
substitutes for flash-attn's.

Five parts, each of which knows only those above it:

- ``uses``: the located ``Use`` records, one per thing the code does that matters;
- ``prefilter``: the cheap byte search that picks the few files worth parsing;
- ``screen``: what each kind of use needs in the text beside its word, so that a file with a word and
  no use is not parsed;
- ``python``: a Python file read with ``ast`` into uses (imports followed as plain aliases);
- ``commands``: command lines and configs (``transformers serve --continuous-batching``, TRL's
  ``use_transformers_paged``, ``attn_implementation:``) and the ``kernels`` lock.

The engine hands every file it read to ``uses_of``; rules join the uses with the environments
(``fa_lint.rules.code``). See docs/code.md.
"""
