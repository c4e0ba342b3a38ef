"""Builds /app/bundle.tar.gz: nested tarballs and .gz files, one TOKEN line deep inside, decoys elsewhere."""

import gzip
import io
import tarfile

TOKEN = "9f3c2a7e41b8d05c"


def tar_of(files: dict[str, bytes], compress: bool = True) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1700000000
            tar.addfile(info, io.BytesIO(data))
    return gz(out.getvalue()) if compress else out.getvalue()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


deepest = tar_of({"logs/app.log": b"boot ok\nTOKEN_HINT=not this one\n",
                  "secrets/env.txt.gz": gz(f"USER=svc\nTOKEN={TOKEN}\nMODE=prod\n".encode())})
middle = tar_of({"readme.txt": b"nothing here; TOKEN: nope\n", "inner/archive.tgz": deepest,
                 "data.csv.gz": gz(b"a,b\n1,2\n")})
outer = {"notes.txt": b"see the archives\n", "level1/pack.tar.gz": middle,
         "level1/other.tar": tar_of({"x.txt": b"TOKENS=deadbeef\n"}, compress=False),
         "misc/empty.gz": gz(b"")}
with open("/app/bundle.tar.gz", "wb") as f:
    f.write(tar_of(outer))
