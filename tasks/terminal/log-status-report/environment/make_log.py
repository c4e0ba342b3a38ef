"""Writes a deterministic access log: many paths, statuses and query strings."""

import random

rng = random.Random(7)
paths = ["/", "/login", "/api/items", "/api/orders", "/static/app.js", "/search", "/api/users", "/health"]
weights = {"/api/orders": 0.30, "/search": 0.22, "/api/items": 0.22, "/login": 0.12, "/api/users": 0.22}
for i in range(2000):
    path = rng.choice(paths)
    status = 500 + rng.choice([0, 2, 3]) if rng.random() < weights.get(path, 0.01) else rng.choice([200, 200, 304, 404])
    query = f"?q={rng.randint(1, 99)}" if rng.random() < 0.4 else ""
    ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
    size = rng.randint(100, 9000)
    minute, second = divmod(i, 60)
    stamp = f"12/Mar/2024:10:{minute % 60:02d}:{second:02d} +0000"
    print(f'{ip} - - [{stamp}] "GET {path}{query} HTTP/1.1" {status} {size} '
          f'"-" "Mozilla/5.0 (X11; Linux x86_64) status/{rng.choice([200, 500])}"')
