"""The connection to ablationd and what a notebook asks of it."""

import dataclasses
import datetime
import getpass
import os
import shutil
import socket
import subprocess
import tempfile

import grpc
from google.protobuf import json_format

from ablationd._proto import (ablation_pb2, ablation_pb2_grpc, enum_word, envelope_items,
                              parse_shape, report_pb2, words_to_names)
from ablationd.frames import measurements_frame, samples_frame

DEFAULT_SERVER = "127.0.0.1:50051"
_PAGE = 1000  # the most a page of ListRuns / QueryMeasurements holds


class AblationError(RuntimeError):
    """A call the daemon answered with an error status (or the CLI failed): `code` is the gRPC
    status code's name (FAILED_PRECONDITION, ...), `details` the daemon's sentence."""

    def __init__(self, method: str, code: str, details: str):
        super().__init__(f"{method}: {code}: {details}")
        self.method, self.code, self.details = method, code, details

    @classmethod
    def from_rpc(cls, method: str, error: grpc.RpcError) -> "AblationError":
        code = error.code().name if hasattr(error, "code") and error.code() else "UNKNOWN"
        details = error.details() if hasattr(error, "details") else str(error)
        return cls(method, code, details or "")


@dataclasses.dataclass
class RunSummary:
    """How a run went, from its stream: state is a word (succeeded, partial, failed, cancelled)."""

    run_id: int = 0
    state: str = ""
    ok: int = 0
    failed: int = 0
    planned: int = 0
    reason: str = ""  # why a run that could not measure failed


def connect(address=None, token=None, tls=False, root_certificates=None, cli=None, timeout=30.0,
            wait=10.0) -> "Client":
    """Connects to ablationd at `address` (default: $ABLATION_SERVER, else 127.0.0.1:50051).

    token: sent with every call as `authorization: Bearer TOKEN` metadata.
    tls: a TLS channel (root_certificates: PEM bytes; default: the system's roots).
    cli: the ablation-client used for reports (default: $ABLATION_CLIENT, PATH, the build tree).
    timeout: seconds for each query (runs have none). wait: seconds to wait for the daemon to
    answer before giving up with ConnectionError (0: do not wait).
    """
    client = Client(address or os.environ.get("ABLATION_SERVER") or DEFAULT_SERVER, token=token,
                    tls=tls, root_certificates=root_certificates, cli=cli, timeout=timeout)
    if wait:
        try:
            grpc.channel_ready_future(client.channel).result(timeout=wait)
        except grpc.FutureTimeoutError:
            client.close()
            raise ConnectionError(
                f"no ablationd answered at {client.address} within {wait:g} s (is it running? "
                "ablationd --listen HOST:PORT)") from None
    return client


def _ms(t):
    if t is None:
        return 0
    if isinstance(t, (int, float)):
        return int(t)
    if isinstance(t, datetime.datetime):  # pandas.Timestamp is one too
        if t.tzinfo is None:
            t = t.replace(tzinfo=datetime.timezone.utc)
        return int(t.timestamp() * 1000)
    raise TypeError(f"a time must be unix milliseconds or a datetime, not {type(t).__name__}")


def _status(word):
    if not word:
        return ablation_pb2.MEASUREMENT_STATUS_UNSPECIFIED
    name = "MEASUREMENT_STATUS_" + word.upper()
    if name not in ablation_pb2.MeasurementStatus.keys():
        raise ValueError(f"status {word!r} is not ok, failed or skipped")
    return ablation_pb2.MeasurementStatus.Value(name)


def _list(value):
    if value is None:
        return []
    return [value] if isinstance(value, (str, int)) else list(value)


def _shapes(value):
    # A tuple is one shape (m, n, k), as parse_shape takes it; a list is a list of shapes.
    return [parse_shape(s) for s in ([value] if isinstance(value, tuple) else _list(value))]


class Client:
    """Use connect(). A context manager: `with ablationd.connect() as daemon: ...`."""

    def __init__(self, address, token=None, tls=False, root_certificates=None, cli=None,
                 timeout=30.0):
        self.address = address
        self.timeout = timeout
        self._cli = cli
        # Kept for the CLI that renders reports (report_text): it calls with the same credentials.
        self._token = token
        self._tls = bool(tls or root_certificates)
        self._root_certificates = root_certificates
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        if tls or root_certificates:
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self.channel = grpc.secure_channel(address, credentials)
        else:
            self.channel = grpc.insecure_channel(address)
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

    # ---------------------------------------------------------------- queries

    def device(self, index=0):
        """GetDeviceResponse: identity, live telemetry, queue."""
        return self._call("GetDevice", ablation_pb2.GetDeviceRequest(device=index))

    def variants(self, glob=""):
        request = ablation_pb2.ListVariantsRequest(glob=glob)
        return list(self._call("ListVariants", request).variants)

    def presets(self, name=""):
        return list(self._call("ListPresets", ablation_pb2.ListPresetsRequest(name=name)).presets)

    def runs(self, tag=None, state=None, limit=50):
        """Runs, newest first (Run messages). state: a word (succeeded, ...). limit None: all."""
        request = ablation_pb2.ListRunsRequest(tag=tag or "", page_size=_PAGE)
        if state:
            request.state = ablation_pb2.RunState.Value("RUN_STATE_" + state.upper())
        out = []
        while True:
            page = self._call("ListRuns", request)
            out.extend(page.runs)
            if (limit and len(out) >= limit) or not page.next_page_token:
                return out[:limit] if limit else out
            request.page_token = page.next_page_token

    def get_run(self, run="latest", include_samples=False):
        """GetRunResponse of run `run` (an id or "latest")."""
        run_id = 0 if run in (None, "latest") else int(run)
        return self._call("GetRun", ablation_pb2.GetRunRequest(run_id=run_id,
                                                                include_samples=include_samples))

    def cancel(self, run_id):
        return self._call("CancelRun", ablation_pb2.CancelRunRequest(run_id=int(run_id)))

    # ---------------------------------------------------------------- user kernels

    def add_kernel(self, source, manifest, timeout=900.0):
        """Adds a user kernel (kernels/user/README.md): `source` and `manifest` are text or paths
        of files. Every knob set is compiled (seconds each); returns the UserKernel. A compile
        error raises AblationError with the compiler's log."""
        def text(value):
            if hasattr(value, "read_text"):
                return value.read_text()
            if isinstance(value, str) and "\n" not in value and os.path.isfile(value):
                with open(value, encoding="utf-8") as f:
                    return f.read()
            return value
        request = ablation_pb2.AddKernelRequest(source=text(source), manifest=text(manifest))
        try:
            response = self._stub.AddKernel(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise AblationError.from_rpc("AddKernel", e) from None
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
                    unpaired=False, window_seconds=0.0, burst_seconds=0.0):
        """The RunRequest these arguments make (what run() and stream() send). regime:
        "sustained" (the daemon's default), "burst" or "locked"; unpaired: each item in a
        window of its own instead of the items of a shape interleaved."""
        request = ablation_pb2.RunRequest(
            variants=_list(variants), shapes=_shapes(shapes), dtype=dtype,
            preset=preset, tags=_list(tags), rounds=rounds, order_seed=order_seed, verify=verify,
            device=device, allow_missing=allow_missing,
            requested_by=requested_by or f"{getpass.getuser()}@{socket.gethostname()} (python)")
        timing = request.timing
        timing.hot_l2, timing.flush_l2 = hot_l2, flush_l2
        timing.min_samples, timing.max_seconds, timing.target_noise = (min_samples, max_seconds,
                                                                       target_noise)
        timing.window_seconds, timing.burst_seconds = window_seconds, burst_seconds
        if regime:
            name = "REGIME_" + str(regime).upper()
            if name not in ablation_pb2.Regime.keys() or name == "REGIME_UNSPECIFIED":
                raise ValueError(f"regime: {regime!r} is not sustained, burst or locked")
            request.regime = ablation_pb2.Regime.Value(name)
        request.unpaired = bool(unpaired)
        if lock_sm_clock or lock_mem_clock:
            request.clocks.mode = ablation_pb2.CLOCK_MODE_LOCK
            request.clocks.sm_mhz, request.clocks.mem_mhz = str(lock_sm_clock), str(lock_mem_clock)
        return request

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

    def run(self, on_event=None, request=None, **kwargs) -> RunSummary:
        """Runs and waits for the end; on_event(event) is called for each event (print_event
        shows progress). Returns the RunSummary; an error status raises AblationError."""
        summary = RunSummary()
        events = self.stream(request, **kwargs)
        try:
            for event in events:
                kind = event.WhichOneof("event")
                if kind == "queued":
                    summary.run_id = event.queued.run_id
                    summary.state = "queued"
                elif kind == "started":
                    summary.state, summary.planned = "running", event.started.total
                elif kind == "finished":
                    f = event.finished
                    summary.state = enum_word(ablation_pb2.RunState, f.state)
                    summary.ok, summary.failed = f.ok, f.failed
                elif kind == "failed":
                    summary.state, summary.reason = "failed", event.failed.reason
                if on_event:
                    on_event(event)
        finally:
            events.close()  # at once, not when collected: an interrupted run stops now
        return summary

    # ---------------------------------------------------------------- results

    def _measurements(self, include_samples, run, variant, dtype, shape, tag, status, since,
                      until):
        filters = (variant, dtype, shape, tag, status, since, until)
        if run is not None and all(f is None for f in filters):
            response = self.get_run(run, include_samples=include_samples)
            return list(response.measurements), {response.run.id: response.run}
        request = ablation_pb2.QueryMeasurementsRequest(
            variant_glob=variant or "", dtype=dtype or "", tag=tag or "", status=_status(status),
            since_ms=_ms(since), until_ms=_ms(until), page_size=_PAGE,
            include_samples=include_samples)
        if shape is not None:
            request.shape.CopyFrom(parse_shape(shape))
        if run is not None:
            request.run_id = self.get_run(run).run.id if run == "latest" else int(run)
        rows = []
        while True:
            page = self._call("QueryMeasurements", request)
            rows.extend(page.measurements)
            if not page.next_page_token:
                break
            request.page_token = page.next_page_token
        return rows, self._runs_by_id({m.run_id for m in rows})

    def _runs_by_id(self, ids):
        # ListRuns pages newest first: stop once the oldest id wanted has been passed.
        found, request = {}, ablation_pb2.ListRunsRequest(page_size=_PAGE)
        while ids - found.keys():
            page = self._call("ListRuns", request)
            found.update({r.id: r for r in page.runs if r.id in ids})
            if not page.next_page_token or (page.runs and page.runs[-1].id <= min(ids)):
                break
            request.page_token = page.next_page_token
        return found

    def results(self, run=None, variant=None, dtype=None, shape=None, tag=None, status=None,
                since=None, until=None):
        """Measurements as a DataFrame, one row per measurement (frames.MEASUREMENT_COLUMNS).
        run: an id or "latest"; the other filters as `ablation-client results` takes them
        (variant: a glob; shape: "4096" or "MxNxK"; status: ok, failed, skipped; since/until:
        datetimes or unix ms). No filter at all: every stored measurement."""
        rows, runs = self._measurements(False, run, variant, dtype, shape, tag, status, since,
                                        until)
        return measurements_frame(rows, runs)

    def samples(self, run=None, variant=None, dtype=None, shape=None, tag=None, status=None,
                since=None, until=None):
        """The raw samples of the same measurements as results(), long (frames.SAMPLE_COLUMNS)."""
        rows, _ = self._measurements(True, run, variant, dtype, shape, tag, status, since, until)
        return samples_frame(rows)

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
        with this client's credentials: its token (ABLATION_TOKEN) and TLS with its roots
        (ABLATION_TLS, ABLATION_CA, written to a private file for the call)."""
        argv = [self.cli_path(), "--server", self.address, "-q", "report", str(run),
                "--format", format]
        env = {k: v for k, v in os.environ.items()
               if k not in ("ABLATION_TOKEN", "ABLATION_TOKEN_FILE", "ABLATION_TLS", "ABLATION_CA")}
        if self._token:
            env["ABLATION_TOKEN"] = self._token
        with tempfile.TemporaryDirectory(prefix="ablationd-report-") as private:
            if self._tls:
                env["ABLATION_TLS"] = "1"
                if self._root_certificates:
                    ca = os.path.join(private, "ca.pem")
                    with open(ca, "wb") as f:
                        f.write(self._root_certificates)
                    env["ABLATION_CA"] = ca
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
