"""How the Python client reaches a daemon: the CLI's connection options (client/app.cc: --server
with its https:// scheme, --tls, --ca, --cert, --key, --tls-server-name, the token and their
ABLATION_* variables) read once, for the blocking and the asyncio channel alike and for the CLI
that renders reports; and, when a channel never becomes ready, the reason in words.

gRPC only says that a channel did not become ready, never why: a daemon that is down, one whose
certificate names another host (a port-forward to a Kubernetes Service, a pod reached by its IP)
and one that wants a client certificate look the same. So a failed connect asks the port itself
with Python's ssl module, which does say."""

from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import tempfile
from typing import List, Optional, Sequence, Tuple, Union

import grpc

PemSource = Union[str, "os.PathLike[str]", bytes, None]

_SCHEMES_TLS = ("https://", "grpcs://")
_CLIENT_CERTIFICATE = ("it ends the connection after the TLS handshake, as a daemon that asks for a "
                       "client certificate does: pass cert=PATH and key=PATH (the CLI's --cert and "
                       "--key)")
_SCHEMES_PLAIN = ("http://", "grpc://")


def _pem(source: PemSource, what: str) -> Optional[bytes]:
    """PEM bytes given as they are, or read from a path."""
    if source is None or source == "":
        return None
    if isinstance(source, bytes):
        return source
    try:
        with open(source, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"{what}: cannot read {os.fspath(source)}: {e.strerror}") from None


def _truthy(text: Optional[str]) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Where and how to connect, every option resolved (arguments first, then the CLI's
    environment variables, as the CLI reads them)."""

    target: str  # host:port, the scheme stripped
    token: Optional[str] = None
    tls: bool = False
    root_certificates: Optional[bytes] = None  # PEM; None: the system's roots
    certificate_chain: Optional[bytes] = None  # the client's certificate (PEM), with its key
    private_key: Optional[bytes] = None
    server_name: Optional[str] = None  # the name to check the certificate against

    @classmethod
    def resolve(cls, address: Optional[str], default_address: str, token: Optional[str] = None,
                token_file: PemSource = None, tls: Optional[bool] = None,
                root_certificates: Optional[bytes] = None, ca: PemSource = None,
                cert: PemSource = None, key: PemSource = None,
                tls_server_name: Optional[str] = None) -> "Settings":
        env = os.environ
        address = address or env.get("ABLATION_SERVER") or default_address
        scheme_tls = None
        for scheme in _SCHEMES_TLS + _SCHEMES_PLAIN:
            if address.startswith(scheme):
                scheme_tls = scheme in _SCHEMES_TLS
                address = address[len(scheme):]
                break
        if token is None:
            token_file = token_file or env.get("ABLATION_TOKEN_FILE")
            if token_file:
                text = _pem(token_file, "token_file").decode("utf-8", "replace")
                token = text.splitlines()[0].strip() if text.strip() else None
            else:
                token = env.get("ABLATION_TOKEN") or None
        roots = root_certificates if root_certificates is not None else _pem(
            ca if ca is not None else env.get("ABLATION_CA"), "ca")
        chain, private_key = _pem(cert, "cert"), _pem(key, "key")
        if (chain is None) != (private_key is None):
            raise ValueError("cert and key go together: the client's certificate and its key")
        server_name = tls_server_name or env.get("ABLATION_TLS_SERVER_NAME") or None
        wants_tls = bool(roots or chain or (tls_server_name or ""))
        if tls is None:
            tls = scheme_tls if scheme_tls is not None else (
                _truthy(env.get("ABLATION_TLS")) or wants_tls)
        if not tls and wants_tls:
            raise ValueError("ca, cert and tls_server_name need TLS: leave tls unset (or True), "
                             "or use an https:// address")
        return cls(address, token, bool(tls), roots, chain, private_key,
                   server_name if tls else None)

    # ------------------------------------------------------------ gRPC

    def channel_credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(root_certificates=self.root_certificates,
                                            private_key=self.private_key,
                                            certificate_chain=self.certificate_chain)

    def channel_options(self) -> List[Tuple[str, object]]:
        # A run's raw samples exceed gRPC's 4 MB default easily, as the CLI knows (client/rpc.cc).
        options: List[Tuple[str, object]] = [("grpc.max_receive_message_length", -1)]
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
        return options

    def metadata(self) -> Tuple[Tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    # ------------------------------------------------------------ the CLI

    def cli_arguments(self, private_dir: str) -> Tuple[List[str], dict]:
        """The CLI's global options and environment for these settings; PEM bytes are written to
        files in `private_dir` (the caller's temporary folder, removed after the call)."""
        argv = ["--server", self.target]
        env = {}
        if self.token:
            env["ABLATION_TOKEN"] = self.token
        if not self.tls:
            return argv, env
        argv.append("--tls")
        for flag, pem, name in (("--ca", self.root_certificates, "ca.pem"),
                                ("--cert", self.certificate_chain, "cert.pem"),
                                ("--key", self.private_key, "key.pem")):
            if pem:
                path = os.path.join(private_dir, name)
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                    f.write(pem)
                argv += [flag, path]
        if self.server_name:
            argv += ["--tls-server-name", self.server_name]
        return argv, env

    # ------------------------------------------------------------ why a connect failed

    def not_ready_message(self, wait: float) -> str:
        """The ConnectionError's sentence when the channel did not become ready in `wait` s."""
        base = f"no ablationd answered at {self.target} within {wait:g} s"
        try:
            reason = self._diagnose()
        except Exception:  # noqa: BLE001 - the diagnosis is a courtesy; never hide the error
            reason = None
        return f"{base}: {reason}" if reason else (
            f"{base} (is it running? ablationd --listen HOST:PORT)")

    def _host_port(self) -> Optional[Tuple[str, int]]:
        if self.target.startswith(("unix:", "unix-abstract:")):
            return None
        host, _, port = self.target.rpartition(":")
        if not host or not port.isdigit():
            return None
        return host.strip("[]"), int(port)

    def _diagnose(self) -> Optional[str]:
        where = self._host_port()
        if where is None:
            return None
        try:
            raw = socket.create_connection(where, timeout=3)
        except OSError:
            return None  # nothing listens: "is it running?" says it
        with raw:
            if self.tls:
                return self._tls_problem(raw, where)
            return self._speaks_tls(raw, where[0])

    def _context(self, check_hostname: bool, files: Sequence[str]) -> ssl.SSLContext:
        context = ssl.create_default_context(
            cadata=self.root_certificates.decode("ascii", "replace")
            if self.root_certificates else None)
        context.check_hostname = check_hostname
        context.set_alpn_protocols(["h2"])
        if files:
            context.load_cert_chain(files[0], files[1])
        return context

    def _tls_problem(self, raw: socket.socket, where: Tuple[str, int]) -> Optional[str]:
        name = self.server_name or where[0]
        with tempfile.TemporaryDirectory(prefix="ablationd-tls-") as private:
            files = []
            if self.certificate_chain:
                files = [os.path.join(private, "cert.pem"), os.path.join(private, "key.pem")]
                for path, pem in zip(files, (self.certificate_chain, self.private_key)):
                    with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                        f.write(pem)
            try:
                with self._context(True, files).wrap_socket(raw, server_hostname=name) as conn:
                    conn.settimeout(3)
                    # TLS 1.3 refuses a missing client certificate only after the handshake: the
                    # daemon closes the connection where an HTTP/2 server would send its settings.
                    if conn.recv(1) == b"" and not self.certificate_chain:
                        return _CLIENT_CERTIFICATE
            except ssl.SSLCertVerificationError as e:
                if "mismatch" not in (e.verify_message or ""):
                    return (f"it speaks TLS, but its certificate is not signed by a CA this "
                            f"client trusts ({e.verify_message}): pass ca=PATH (the CLI's --ca)")
                names = self._certificate_names(where, files)
                named = f" (it names {', '.join(names)})" if names else ""
                hint = names[0] if names else "NAME"
                return (f"it speaks TLS, but its certificate is not for the name '{name}'{named}: "
                        f"pass tls_server_name='{hint}' (the CLI's --tls-server-name), as a "
                        f"port-forward or a pod's IP needs")
            except ssl.SSLError as e:
                text = str(e)
                if "certificate required" in text or "CERTIFICATE_REQUIRED" in text:
                    return _CLIENT_CERTIFICATE
                if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text:
                    return "it does not speak TLS: connect without tls (an http:// address)"
                return f"the TLS handshake failed: {e.reason or text}"
            except (OSError, socket.timeout):
                return None
        return None

    def _certificate_names(self, where: Tuple[str, int], files: Sequence[str]) -> List[str]:
        """The DNS names and addresses of the daemon's certificate, read over a connection that
        checks the chain but not the name."""
        with socket.create_connection(where, timeout=3) as raw:
            with self._context(False, files).wrap_socket(raw) as conn:
                cert = conn.getpeercert() or {}
        names = [value for kind, value in cert.get("subjectAltName", ())
                 if kind in ("DNS", "IP Address")]
        if not names:
            names = [value for rdn in cert.get("subject", ()) for key, value in rdn
                     if key == "commonName"]
        return names

    def _speaks_tls(self, raw: socket.socket, host: str) -> Optional[str]:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        try:
            with context.wrap_socket(raw, server_hostname=host):
                return ("it speaks TLS: pass tls=True (or an https:// address) and ca=PATH (the "
                        "CLI's --tls and --ca)")
        except (ssl.SSLError, OSError):
            return None
