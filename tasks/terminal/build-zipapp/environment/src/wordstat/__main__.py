import sys

from wordstat.counting import stats

lines, words, common = stats(open(sys.argv[1]).read())
print(f"lines={lines} words={words} common={common}")
