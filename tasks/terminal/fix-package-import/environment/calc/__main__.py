import sys

from calc import evaluate

value = evaluate(sys.argv[1])
print(int(value) if value == int(value) else value)
