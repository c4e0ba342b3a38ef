#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import gzip
import io
import re
import tarfile

def search(name, data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    yield from search(member.name, tar.extractfile(member).read())
        return
    except tarfile.TarError:
        pass
    for match in re.finditer(rb"^TOKEN=([0-9a-f]+)$", data, re.M):
        yield match.group(1).decode()

found = list(search("bundle", open("/app/bundle.tar.gz", "rb").read()))
assert len(found) == 1, found
open("/app/token.txt", "w").write(found[0] + "\n")
PY
