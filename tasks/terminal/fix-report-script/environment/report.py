import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
header, rows = rows[0], rows[1:-1]
events, scores = {}, {}
for user, _kind, score in rows:
    events[user] = events.get(user, 0) + 1
    scores.setdefault(user, []).append(int(score))
for user in sorted(events):
    print(user, events[user], f"{sum(scores[user]) / len(scores[user]):.1f}")
