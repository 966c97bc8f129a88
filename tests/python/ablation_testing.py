"""A real ablationd on loopback with the fake worker (tests/support/fake_worker.cc) and a SQLite
file in a temporary folder, for the Python tests (and the metrics and k8s ones). The binaries
come from the environment ctest sets: ABLATIOND, ABLATION_CLIENT, FAKE_WORKER."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def required_env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"${name} is not set: run this test through ctest (tests/python/python.cmake)")
    return value


def make_certificates(folder, server_san="DNS:ablationd,DNS:ablationd.ablationd.svc"):
    """A test CA (ca.pem) and, signed by it, a server certificate for `server_san` (server.pem,
    server.key: by default the Kubernetes Service's names, as deploy/k8s/README.md makes them, so
    not 127.0.0.1) and a client certificate (client.pem, client.key), made with openssl in
    `folder` (a pathlib.Path). Returns the folder."""
    script = f"""set -e
cd {folder}
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca
for who in server client; do
  openssl req -newkey rsa:2048 -nodes -keyout $who.key -out $who.csr -subj /CN=$who
done
printf 'subjectAltName={server_san}' > server.ext
printf 'extendedKeyUsage=clientAuth' > client.ext
for who in server client; do
  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $who.pem \
    -days 1 -extfile $who.ext
done
"""
    subprocess.run(["/bin/sh", "-c", script], check=True, capture_output=True)
    return folder


def free_port(host="127.0.0.1"):
    """A port of `host` (an IPv4 or IPv6 literal) that was free a moment ago (for servers that
    cannot report the one they bound)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def has_ipv6_loopback():
    """Whether ::1 can be bound here (containers may have no IPv6)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Daemon:
    """ablationd --listen 127.0.0.1:0 (the port read back from --port-file); with metrics, served
    on `metrics_host` ("127.0.0.1", or "::1" for IPv6) at metrics_port."""

    def __init__(self, metrics=False, env=None, extra_args=(), metrics_host="127.0.0.1"):
        self.dir = tempfile.mkdtemp(prefix="ablation-py-")
        self.db = os.path.join(self.dir, "results.db")
        self.log_path = os.path.join(self.dir, "daemon.log")
        self.metrics_port = free_port(metrics_host) if metrics else 0
        bracketed = f"[{metrics_host}]" if ":" in metrics_host else metrics_host
        port_file = os.path.join(self.dir, "port")
        argv = [required_env("ABLATIOND"), "--listen", "127.0.0.1:0", "--port-file", port_file,
                "--db", self.db, "--worker", required_env("FAKE_WORKER"), "--log-level", "debug",
                "--metrics-listen", f"{bracketed}:{self.metrics_port}" if metrics else "",
                *extra_args]
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ablationd exited at start ({self.process.returncode}):\n{self.log()}")
            if os.path.exists(port_file):
                with open(port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    self.address = f"127.0.0.1:{self.port}"
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"ablationd did not listen within 60 s:\n{self.log()}")

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def client(self, *args, timeout=120):
        """ablation-client --server ADDRESS ARGS..., as a CompletedProcess."""
        return subprocess.run([required_env("ABLATION_CLIENT"), "--server", self.address, *args],
                              capture_output=True, text=True, timeout=timeout, check=False)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
