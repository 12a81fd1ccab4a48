#!/bin/sh
pip install -U flash-attn>=2.5.8
