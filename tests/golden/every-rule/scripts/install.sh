#!/bin/sh
set -e
pip install "flash-attn==${FA_VERSION}" --no-build-isolation
