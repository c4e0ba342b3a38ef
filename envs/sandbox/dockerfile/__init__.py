"""A task's Dockerfile made into a sandbox: `build.py` builds it into an image for container backends (cached by
content), `replay.py` replays its steps in the local sandbox, or says why the task needs a container instead.

The Dockerfile syntax itself is `polar.dockerfile`, in the core, because the task loaders read it too.
"""
