#!/bin/bash
set -euo pipefail
cd /app/calc
sed -i 's/^from evaluate import evaluate/from .evaluate import evaluate/' __init__.py
sed -i 's/^from tokens import tokenize/from .tokens import tokenize/' evaluate.py
# in _term, the right operand is one factor, so that 8 / 4 / 2 is (8 / 4) / 2
sed -i 's/tokens\[0\], _term(tokens\[1:\])$/tokens[0], _factor(tokens[1:])/' evaluate.py
