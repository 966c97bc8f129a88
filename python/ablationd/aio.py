"""ablationd for asyncio (grpc.aio): the calls of ablationd.Client, awaited.

    import ablationd.aio
    async with await ablationd.aio.connect("127.0.0.1:50051") as daemon:
        summary = await daemon.run(preset="ladder-a", shapes=["4096"], progress=True)
        df = await daemon.results(run=summary.run_id)
        async for event in daemon.watch(run_id): ...

The requests, the paging and the frames are the blocking client's own (ablationd/_calls.py,
frames.py), so both give the same answers; reports are rendered by the CLI as there, in a
thread."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, List, Optional

import grpc

from ablationd import _calls, history
from ablationd._proto import ablation_pb2, ablation_pb2_grpc
from ablationd._tls import PemSource
from ablationd.client import AblationError, RunSummary
from ablationd.client import Client as _BlockingClient
from ablationd.frames import measurements_frame, runs_frame, samples_frame
from ablationd.progress import as_bar, chain

if TYPE_CHECKING:
    import pandas as pd


async def connect(address: Optional[str] = None, token: Optional[str] = None,
                  tls: Optional[bool] = None, root_certificates: Optional[bytes] = None,
                  cli: Optional[str] = None, timeout: float = 30.0, wait: float = 10.0, *,
                  ca: PemSource = None, cert: PemSource = None, key: PemSource = None,
                  tls_server_name: Optional[str] = None,
                  token_file: PemSource = None) -> "Client":
    """As ablationd.connect (the same options and environment), in the running event loop."""
    client = Client(address, token=token, tls=tls, root_certificates=root_certificates, cli=cli,
                    timeout=timeout, ca=ca, cert=cert, key=key, tls_server_name=tls_server_name,
                    token_file=token_file)
    if wait:
        try:
            await asyncio.wait_for(client.channel.channel_ready(), timeout=wait)
        except asyncio.TimeoutError:
            await client.close()
            message = await asyncio.to_thread(client.settings.not_ready_message, wait)
            raise ConnectionError(message) from None
    return client


class Client:
    """Use `await ablationd.aio.connect()`. An async context manager."""

    def __init__(self, address: Optional[str] = None, token: Optional[str] = None,
                 tls: Optional[bool] = None, root_certificates: Optional[bytes] = None,
                 cli: Optional[str] = None, timeout: float = 30.0, *, ca: PemSource = None,
                 cert: PemSource = None, key: PemSource = None,
                 tls_server_name: Optional[str] = None, token_file: PemSource = None):
        # Reports are the CLI's (Client.report_text says why), called with these credentials;
        # the blocking client also resolves the options once for both.
        self._reports = _BlockingClient(address, token=token, tls=tls,
                                        root_certificates=root_certificates, cli=cli,
                                        timeout=timeout, ca=ca, cert=cert, key=key,
                                        tls_server_name=tls_server_name, token_file=token_file)
        self.settings = self._reports.settings
        self.address = self.settings.target
        self.timeout = timeout
        self._metadata = self.settings.metadata()
        options = self.settings.channel_options()
        if self.settings.tls:
            self.channel = grpc.aio.secure_channel(self.address,
                                                   self.settings.channel_credentials(),
                                                   options=options)
        else:
            self.channel = grpc.aio.insecure_channel(self.address, options=options)
        self._stub = ablation_pb2_grpc.AblationStub(self.channel)

    async def close(self):
        self._reports.close()
        await self.channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def _call(self, name, request):
        try:
            return await getattr(self._stub, name)(request, timeout=self.timeout,
                                                   metadata=self._metadata)
        except grpc.RpcError as e:
            raise AblationError.from_rpc(name, e) from None

    async def _drive(self, plan):
        try:
            method, request = next(plan)
            while True:
                method, request = plan.send(await self._call(method, request))
        except StopIteration as done:
            return done.value

    # ---------------------------------------------------------------- queries

    async def device(self, index=0):
        return await self._call("GetDevice", ablation_pb2.GetDeviceRequest(device=index))

    async def variants(self, glob=""):
        return list((await self._call("ListVariants",
                                      ablation_pb2.ListVariantsRequest(glob=glob))).variants)

    async def presets(self, name=""):
        return list((await self._call("ListPresets",
                                      ablation_pb2.ListPresetsRequest(name=name))).presets)

    async def runs(self, tag: Optional[str] = None, state: Optional[str] = None,
                   limit: Optional[int] = 50) -> "pd.DataFrame":
        """As ablationd.Client.runs: a DataFrame, one row per run, newest first."""
        return runs_frame(await self.run_messages(tag, state, limit))

    async def run_messages(self, tag: Optional[str] = None, state: Optional[str] = None,
                           limit: Optional[int] = 50) -> List[ablation_pb2.Run]:
        """As ablationd.Client.run_messages: the Run messages."""
        return await self._drive(_calls.runs_plan(tag, state, limit))

    async def get_run(self, run="latest", include_samples=False):
        return await self._call("GetRun", _calls.get_run_request(run, include_samples))

    async def cancel(self, run_id):
        return await self._call("CancelRun", ablation_pb2.CancelRunRequest(run_id=int(run_id)))

    async def history(self, variant, dtype=None, shape=None, device=None, regime=None,
                      since=None, tag=None, run=None):
        """As ablationd.Client.history: a list of history.Series."""
        return history.series_of(await self._call("GetHistory", history.history_request(
            variant, dtype, shape, device, regime, since, tag, run)))

    # ---------------------------------------------------------------- runs

    def run_request(self, shapes=None, **kwargs):
        """As ablationd.Client.run_request."""
        return _calls.run_request(shapes_=shapes, **kwargs)

    async def stream(self, request=None, **kwargs):
        """RunAblation's events (an async generator). Leaving it early (aclose, or a break out of
        `async for` once the generator is collected) cancels the run, as the blocking one does."""
        call = self._stub.RunAblation(request or self.run_request(**kwargs),
                                      metadata=self._metadata)
        run_id, ended = 0, False
        try:
            async for event in call:
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
            call.cancel()
            if not ended and run_id:
                await self.cancel(run_id)

    async def run(self, on_event=None, request=None, progress=False, **kwargs) -> RunSummary:
        """Runs and waits for the end; as ablationd.Client.run."""
        summary = RunSummary()
        callback = chain(on_event, as_bar(progress))
        return await _consume(self.stream(request, **kwargs), summary, callback)

    async def watch(self, run_id):
        """WatchRun's events (an async generator); leaving it stops watching, not the run."""
        call = self._stub.WatchRun(ablation_pb2.WatchRunRequest(run_id=int(run_id)),
                                   metadata=self._metadata)
        try:
            async for event in call:
                yield event
        except grpc.RpcError as e:
            raise AblationError.from_rpc("WatchRun", e) from None
        finally:
            call.cancel()

    async def follow(self, run_id, on_event=None, progress=False) -> RunSummary:
        """Watches run `run_id` to its end; as ablationd.Client.follow."""
        summary = RunSummary(run_id=int(run_id))
        bar = as_bar(progress)
        if bar is not None:
            bar.count_from(*await self._drive(_calls.stored_count_plan(run_id)))
        callback = chain(on_event, bar)
        return await _consume(self.watch(run_id), summary, callback)

    # ---------------------------------------------------------------- results

    async def results(self, run=None, variant=None, dtype=None, shape=None, tag=None,
                      status=None, since=None, until=None):
        """As ablationd.Client.results: a DataFrame, one row per measurement."""
        rows, runs = await self._drive(_calls.measurements_plan(
            False, run, variant, dtype, shape, tag, status, since, until))
        return measurements_frame(rows, runs)

    async def samples(self, run=None, variant=None, dtype=None, shape=None, tag=None,
                      status=None, since=None, until=None):
        rows, _ = await self._drive(_calls.measurements_plan(
            True, run, variant, dtype, shape, tag, status, since, until))
        return samples_frame(rows)

    # ---------------------------------------------------------------- report

    async def report(self, run="latest"):
        """As ablationd.Client.report (the CLI renders it, in a thread)."""
        return await asyncio.to_thread(self._reports.report, run)

    async def report_text(self, run="latest", format="md"):
        return await asyncio.to_thread(self._reports.report_text, run, format)


async def _consume(events, summary, callback):
    """Notes each event of the async generator `events` in `summary` and hands it to `callback`,
    to the stream's end (run and follow); the generator is closed however the loop ends."""
    try:
        async for event in events:
            _calls.note_event(summary, event)
            if callback:
                callback(event)
    finally:
        await events.aclose()
    return summary
