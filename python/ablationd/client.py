"""The connection to ablationd and what a notebook asks of it."""

from __future__ import annotations

import base64
import dataclasses
import os
import shutil
import subprocess
import tempfile
from typing import TYPE_CHECKING, List, Optional

import grpc
from google.protobuf import json_format

from ablationd import _calls, history
from ablationd._proto import (ablation_pb2, ablation_pb2_grpc, envelope_items, report_pb2,
                              words_to_names)
from ablationd._tls import PemSource, Settings
from ablationd.frames import measurements_frame, runs_frame, samples_frame
from ablationd.progress import as_bar, chain

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_SERVER = "127.0.0.1:50051"

# The CLI reads its connection from these too: a report is rendered with this client's own, not
# with whatever the notebook's environment holds.
_CLI_CONNECTION_ENV = ("ABLATION_SERVER", "ABLATION_TOKEN", "ABLATION_TOKEN_FILE", "ABLATION_TLS",
                       "ABLATION_CA", "ABLATION_TLS_SERVER_NAME")


class AblationError(RuntimeError):
    """A call the daemon answered with an error status (or the CLI failed): `code` is the gRPC
    status code's name (FAILED_PRECONDITION, ...), `details` the daemon's sentence."""

    def __init__(self, method: str, code: str, details: str, reason: str = ""):
        super().__init__(f"{method}: {code}: {details}")
        self.method, self.code, self.details = method, code, details
        # One word where the code alone does not tell: "compile_error" for a user kernel whose
        # source did not compile (the daemon's trailer ablation-reason).
        self.reason = reason

    @classmethod
    def from_rpc(cls, method: str, error: grpc.RpcError) -> "AblationError":
        code = error.code().name if hasattr(error, "code") and error.code() else "UNKNOWN"
        details = error.details() if hasattr(error, "details") else str(error)
        trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
        reason = dict(trailers or ()).get("ablation-reason", "")
        return cls(method, code, details or "", reason)


@dataclasses.dataclass
class RunSummary:
    """How a run went, from its stream: state is a word (succeeded, partial, failed, cancelled)."""

    run_id: int = 0
    state: str = ""
    ok: int = 0
    failed: int = 0
    planned: int = 0
    reason: str = ""  # why a run that could not measure failed


def connect(address: Optional[str] = None, token: Optional[str] = None,
            tls: Optional[bool] = None, root_certificates: Optional[bytes] = None,
            cli: Optional[str] = None, timeout: float = 30.0, wait: float = 10.0, *,
            ca: PemSource = None, cert: PemSource = None, key: PemSource = None,
            tls_server_name: Optional[str] = None, token_file: PemSource = None) -> "Client":
    """Connects to ablationd at `address` (default: $ABLATION_SERVER, else 127.0.0.1:50051),
    with the CLI's options and its environment variables where an argument is not given.

    address: HOST:PORT; https://HOST:PORT (or grpcs://) is TLS, as for the CLI's --server.
    token: sent with every call as `authorization: Bearer TOKEN` metadata (default:
    $ABLATION_TOKEN); token_file: a file whose first line is the token (--token-file,
    $ABLATION_TOKEN_FILE).
    tls: a TLS channel (--tls, $ABLATION_TLS); implied by an https:// address and by any of:
    ca: the CA that signed the daemon's certificate, a path or PEM bytes (--ca, $ABLATION_CA;
    root_certificates: the same as PEM bytes; default: the system's roots).
    cert, key: the client's certificate and its key, paths or PEM bytes, for a daemon that asks
    for one (tls.client_ca) (--cert, --key).
    tls_server_name: the name to check the daemon's certificate against instead of the address's
    host (--tls-server-name, $ABLATION_TLS_SERVER_NAME): a port-forward to a Kubernetes Service
    reaches 127.0.0.1 with a certificate for "ablationd".
    cli: the ablation-client used for reports (default: $ABLATION_CLIENT, PATH, the build tree).
    timeout: seconds for each query (runs have none). wait: seconds to wait for the daemon to
    answer before giving up with ConnectionError, which says why where it can tell (nothing
    listens; a certificate for another name; an unknown CA; a client certificate wanted); 0:
    do not wait.
    """
    client = Client(address, token=token, tls=tls, root_certificates=root_certificates, cli=cli,
                    timeout=timeout, ca=ca, cert=cert, key=key, tls_server_name=tls_server_name,
                    token_file=token_file)
    if wait:
        try:
            grpc.channel_ready_future(client.channel).result(timeout=wait)
        except grpc.FutureTimeoutError:
            client.close()
            raise ConnectionError(client.settings.not_ready_message(wait)) from None
    return client


class Client:
    """Use connect(). A context manager: `with ablationd.connect() as daemon: ...`."""

    def __init__(self, address: Optional[str] = None, token: Optional[str] = None,
                 tls: Optional[bool] = None, root_certificates: Optional[bytes] = None,
                 cli: Optional[str] = None, timeout: float = 30.0, *, ca: PemSource = None,
                 cert: PemSource = None, key: PemSource = None,
                 tls_server_name: Optional[str] = None, token_file: PemSource = None):
        self.settings = Settings.resolve(address, DEFAULT_SERVER, token=token,
                                         token_file=token_file, tls=tls,
                                         root_certificates=root_certificates, ca=ca, cert=cert,
                                         key=key, tls_server_name=tls_server_name)
        self.address = self.settings.target
        self.timeout = timeout
        self._cli = cli
        self._metadata = self.settings.metadata()
        if self.settings.tls:
            self.channel = grpc.secure_channel(self.address,
                                               self.settings.channel_credentials(),
                                               options=self.settings.channel_options())
        else:
            self.channel = grpc.insecure_channel(self.address,
                                                 options=self.settings.channel_options())
        self._stub = ablation_pb2_grpc.AblationStub(self.channel)

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, name, request):
        try:
            return getattr(self._stub, name)(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise AblationError.from_rpc(name, e) from None

    def _drive(self, plan):
        """Runs a plan of _calls with blocking calls; returns what it returns."""
        try:
            method, request = next(plan)
            while True:
                method, request = plan.send(self._call(method, request))
        except StopIteration as done:
            return done.value

    # ---------------------------------------------------------------- queries

    def device(self, index=0):
        """GetDeviceResponse: identity, live telemetry, queue."""
        return self._call("GetDevice", ablation_pb2.GetDeviceRequest(device=index))

    def variants(self, glob=""):
        request = ablation_pb2.ListVariantsRequest(glob=glob)
        return list(self._call("ListVariants", request).variants)

    def presets(self, name=""):
        return list(self._call("ListPresets", ablation_pb2.ListPresetsRequest(name=name)).presets)

    def runs(self, tag: Optional[str] = None, state: Optional[str] = None,
             limit: Optional[int] = 50) -> "pd.DataFrame":
        """Runs, newest first, as a DataFrame (frames.RUN_COLUMNS: one row per run, as results()
        has one per measurement). state: a word (succeeded, ...). limit None: all. The messages
        themselves: run_messages()."""
        return runs_frame(self.run_messages(tag, state, limit))

    def run_messages(self, tag: Optional[str] = None, state: Optional[str] = None,
                     limit: Optional[int] = 50) -> List[ablation_pb2.Run]:
        """The same runs as Run messages (ablation.proto), every field as the daemon sent it."""
        return self._drive(_calls.runs_plan(tag, state, limit))

    def get_run(self, run="latest", include_samples=False):
        """GetRunResponse of run `run` (an id or "latest")."""
        return self._call("GetRun", _calls.get_run_request(run, include_samples))

    def cancel(self, run_id):
        return self._call("CancelRun", ablation_pb2.CancelRunRequest(run_id=int(run_id)))

    # ---------------------------------------------------------------- user kernels

    def add_kernel(self, source, manifest, timeout=900.0):
        """Adds a user kernel (kernels/user/README.md): `source` and `manifest` are text, bytes or
        paths of files (a cubin's bytes are sent as base64, as the command line sends them).
        Every knob set is compiled (seconds each); returns the UserKernel. A compile error raises
        AblationError with the compiler's log, naming the files as given."""
        return self._add_kernel(source, manifest, timeout, check_only=False, arch="")

    def check_kernel(self, source, manifest, arch="", timeout=900.0):
        """Checks a user kernel without keeping it: the manifest validated and every knob set
        compiled for `arch` ("sm_90a"; "" for GPU 0's, which needs a usable GPU). Returns the
        UserKernel an add would make (each build's registers, spills, shared memory); a compile
        error raises AblationError whose reason is "compile_error"."""
        return self._add_kernel(source, manifest, timeout, check_only=True, arch=arch)

    def _add_kernel(self, source, manifest, timeout, check_only, arch):
        def text(value):
            # A cubin (bytes or a file that begin with an ELF header) travels as base64 text, as
            # ablation-client sends it; anything else as UTF-8 text.
            name = ""
            if hasattr(value, "read_bytes"):
                value, name = value.read_bytes(), os.path.basename(str(value))
            elif isinstance(value, str) and "\n" not in value and os.path.isfile(value):
                with open(value, "rb") as f:
                    value, name = f.read(), os.path.basename(value)
            if isinstance(value, (bytes, bytearray)):
                if bytes(value[:4]) == b"\x7fELF":
                    return base64.b64encode(bytes(value)).decode("ascii"), name
                return bytes(value).decode("utf-8"), name
            return value, name
        source_text, source_name = text(source)
        manifest_text, manifest_name = text(manifest)
        request = ablation_pb2.AddKernelRequest(
            source=source_text, manifest=manifest_text, source_name=source_name,
            manifest_name=manifest_name, check_only=check_only, arch=arch)
        try:
            response = self._stub.AddKernel(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise AblationError.from_rpc("CheckKernel" if check_only else "AddKernel",
                                         e) from None
        return response.kernel

    def kernels(self):
        """The user kernels the daemon holds (UserKernel messages, by name)."""
        return list(self._call("ListKernels", ablation_pb2.ListKernelsRequest()).kernels)

    def kernel(self, name):
        """One user kernel with its builds, source and manifest."""
        return self._call("GetKernel", ablation_pb2.GetKernelRequest(name=name)).kernel

    def remove_kernel(self, name):
        self._call("RemoveKernel", ablation_pb2.RemoveKernelRequest(name=name))

    # ---------------------------------------------------------------- runs

    def run_request(self, variants=None, shapes=None, dtype="", preset="", tags=None, rounds=0,
                    order_seed=0, verify=False, device=0, allow_missing=False, hot_l2=False,
                    flush_l2=False, min_samples=0, max_seconds=0.0, target_noise=0.0,
                    lock_sm_clock="", lock_mem_clock="", requested_by=None, regime="",
                    unpaired=False, window_seconds=0.0, burst_seconds=0.0, fresh_inputs=False):
        """The RunRequest these arguments make (what run() and stream() send). regime:
        "sustained" (the daemon's default), "burst" or "locked"; unpaired: each item in a
        window of its own instead of the items of a shape interleaved; fresh_inputs: each round
        on inputs allocated anew (2 or more rounds)."""
        return _calls.run_request(
            variants=variants, shapes_=shapes, dtype=dtype, preset=preset, tags=tags,
            rounds=rounds, order_seed=order_seed, verify=verify, device=device,
            allow_missing=allow_missing, hot_l2=hot_l2, flush_l2=flush_l2,
            min_samples=min_samples, max_seconds=max_seconds, target_noise=target_noise,
            lock_sm_clock=lock_sm_clock, lock_mem_clock=lock_mem_clock,
            requested_by=requested_by, regime=regime, unpaired=unpaired,
            window_seconds=window_seconds, burst_seconds=burst_seconds,
            fresh_inputs=fresh_inputs)

    def stream(self, request=None, **kwargs):
        """RunAblation's events as they come (RunEvent messages): queued, started, one per
        measurement, then finished or failed. Leaving the loop early cancels the run (the daemon
        keeps a run whose client merely goes away, so this asks for it with CancelRun). A stream
        that ends in an error raises AblationError."""
        call = self._stub.RunAblation(request or self.run_request(**kwargs),
                                      metadata=self._metadata)
        run_id, ended = 0, False
        try:
            for event in call:
                if event.HasField("queued"):
                    run_id = event.queued.run_id
                if event.HasField("finished") or event.HasField("failed"):
                    ended = True
                yield event
            ended = True
        except grpc.RpcError as e:
            ended = True
            raise AblationError.from_rpc("RunAblation", e) from None
        finally:
            if not ended and run_id:
                self.cancel(run_id)
            call.cancel()  # no-op once the stream has ended

    def run(self, on_event=None, request=None, progress=False, **kwargs) -> RunSummary:
        """Runs and waits for the end; on_event(event) is called for each event (print_event
        shows progress lines). progress=True draws a progress bar (ProgressBar: tqdm's where
        installed, else a text line) on stderr; a ProgressBar of your own draws where it says.
        Returns the RunSummary; an error status raises AblationError."""
        summary = RunSummary()
        callback = chain(on_event, as_bar(progress))
        events = self.stream(request, **kwargs)
        try:
            for event in events:
                _calls.note_event(summary, event)
                if callback:
                    callback(event)
        finally:
            events.close()  # at once, not when collected: an interrupted run stops now
        return summary

    def watch(self, run_id):
        """WatchRun's events of a queued or running run (after `run --detach`, or another
        client's run): its Started event again, then its measurements from now on, then finished
        (a run that has ended: finished alone). Leaving the loop stops watching, not the run."""
        call = self._stub.WatchRun(ablation_pb2.WatchRunRequest(run_id=int(run_id)),
                                   metadata=self._metadata)
        try:
            yield from call
        except grpc.RpcError as e:
            raise AblationError.from_rpc("WatchRun", e) from None
        finally:
            call.cancel()

    def follow(self, run_id, on_event=None, progress=False) -> RunSummary:
        """Watches run `run_id` to its end, as run() does a new one: on_event for each event,
        progress=True a progress bar that counts on from the measurements already stored (a
        bar that joins at 64 of 128 starts there). Returns the RunSummary."""
        summary = RunSummary(run_id=int(run_id))
        bar = as_bar(progress)
        if bar is not None:
            bar.count_from(*self._drive(_calls.stored_count_plan(run_id)))
        callback = chain(on_event, bar)
        for event in self.watch(run_id):
            _calls.note_event(summary, event)
            if callback:
                callback(event)
        return summary

    # ---------------------------------------------------------------- results

    def results(self, run=None, variant=None, dtype=None, shape=None, tag=None, status=None,
                since=None, until=None):
        """Measurements as a DataFrame, one row per measurement (frames.MEASUREMENT_COLUMNS).
        run: an id or "latest"; the other filters as `ablation-client results` takes them
        (variant: a glob; shape: "4096" or "MxNxK"; status: ok, failed, skipped; since/until:
        datetimes or unix ms). No filter at all: every stored measurement."""
        rows, runs = self._drive(_calls.measurements_plan(False, run, variant, dtype, shape, tag,
                                                          status, since, until))
        return measurements_frame(rows, runs)

    def samples(self, run=None, variant=None, dtype=None, shape=None, tag=None, status=None,
                since=None, until=None):
        """The raw samples of the same measurements as results(), long (frames.SAMPLE_COLUMNS)."""
        rows, _ = self._drive(_calls.measurements_plan(True, run, variant, dtype, shape, tag,
                                                       status, since, until))
        return samples_frame(rows)

    # ---------------------------------------------------------------- history

    def history(self, variant, dtype=None, shape=None, device=None, regime=None, since=None,
                tag=None, run=None):
        """The series of `variant` (a name, short name or glob) as `ablation-client history`
        shows them: a list of history.Series, each with its points, its change points and the
        newest point against the segment before it. dtype, shape ("4096", "MxNxK"), device (a
        UUID or an index), regime (sustained, burst, locked), since (a datetime or unix ms), tag
        and run (only series with a point in that run) narrow it."""
        return history.series_of(self._call("GetHistory", history.history_request(
            variant, dtype, shape, device, regime, since, tag, run)))

    # ---------------------------------------------------------------- report

    def cli_path(self):
        """The ablation-client that reports are made with."""
        for candidate in (self._cli, os.environ.get("ABLATION_CLIENT")):
            if candidate:
                return candidate
        found = shutil.which("ablation-client")
        if found:
            return found
        try:
            from ablationd import _build  # written by the build: this build's client
            if os.access(_build.CLIENT, os.X_OK):
                return _build.CLIENT
        except ImportError:
            pass
        raise FileNotFoundError("ablation-client not found: pass connect(..., cli=PATH), set "
                                "ABLATION_CLIENT, or put it on PATH")

    def report_text(self, run="latest", format="md"):
        """`ablation-client report RUN --format FORMAT` (md, html, csv or json) as text.

        The report is the CLI's, not rebuilt here: its model (the presets' rungs, the cuBLAS
        share, bootstrap intervals with a fixed seed) lives in client/report/, and a second
        implementation would be a second report that can disagree with the first. The CLI calls
        with this client's connection: its token (ABLATION_TOKEN) and TLS options (--tls, --ca,
        --cert, --key, --tls-server-name; PEM bytes written to private files for the call)."""
        env = {k: v for k, v in os.environ.items() if k not in _CLI_CONNECTION_ENV}
        with tempfile.TemporaryDirectory(prefix="ablationd-report-") as private:
            connection, connection_env = self.settings.cli_arguments(private)
            env.update(connection_env)
            argv = [self.cli_path(), *connection, "-q", "report", str(run), "--format", format]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False,
                                  env=env)
        if done.returncode != 0:
            raise AblationError("report", f"exit {done.returncode}", done.stderr.strip())
        return done.stdout

    def report(self, run="latest"):
        """The report of a run as its model, a report_pb2.Report (report.proto): sections with
        rows, each with TFLOPS, share of cuBLAS and change [95% interval]. frames.report_frame
        makes a DataFrame of it."""
        item = self.report_json(run)
        try:
            return json_format.ParseDict(words_to_names(item, report_pb2.Report.DESCRIPTOR),
                                         report_pb2.Report(), ignore_unknown_fields=True)
        except json_format.ParseError as e:
            raise AblationError("report", "bad JSON", f"{e}") from None

    def report_json(self, run="latest"):
        """The same report as plain dicts and lists: the one item of `report --format json`'s
        envelope, enum values as words ("succeeded", "missing") as in the CSV."""
        text = self.report_text(run, "json")
        try:
            items = envelope_items(text, "report")
        except ValueError as e:
            raise AblationError("report", "bad JSON", str(e)) from None
        if len(items) != 1:
            raise AblationError("report", "bad JSON", f"{len(items)} reports, not 1")
        return items[0]
