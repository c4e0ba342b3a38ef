"""Runs inside a sandbox: listens on loopback TCP and forwards each connection to the gateway's Unix socket.

Standalone (stdlib only); polar copies it into the sandbox. The sandbox has no network of its own, so a
CLI given `http://127.0.0.1:PORT` as its base URL reaches the gateway only through this bridge.
Usage: python3 bridge.py PORT SOCKET_PATH
"""

import asyncio
import sys


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def main(port: int, socket_path: str) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
        client_writer.close()
        upstream_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    print("bridge ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
