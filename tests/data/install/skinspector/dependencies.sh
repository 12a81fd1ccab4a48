uv pip install wheel flash-attn --no-build-isolation
uv pip install torch torchvision --index-url https://download.pytorch.org/whl/cu129
