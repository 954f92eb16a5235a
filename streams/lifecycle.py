"""The two `with` shapes of the bus's clients and of the services' long-running parts.

`Closing`: `with thing:` hands back the thing and calls its `close()` on the way out (producers,
consumers, dead-letter routers, sinks, event stores). `Running`: `with thing:` calls `start()`
and hands back what it returns, and calls `stop()` on the way out (a local broker, a fleet of
device runners, the data loop). A class takes one as a base and defines the method it names.
`stop_process` is how a helper process (a worker, a server) is ended: asked, then made.
"""

from __future__ import annotations

import subprocess
from types import TracebackType
from typing import Self

__all__ = ["Closing", "Running", "stop_process"]


class Closing:
    """A context manager that closes its object on leaving the `with` block."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Running:
    """A context manager that starts its object on entering the `with` block and stops it on
    leaving."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> object:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def stop_process(process: subprocess.Popen[bytes], grace_s: float = 30.0) -> int:
    """Stops `process`: SIGTERM, up to `grace_s` seconds for a clean exit, then SIGKILL; returns
    its exit code."""
    process.terminate()
    try:
        return process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
