"""What the client asks of the daemon, written once for ablationd.Client and ablationd.aio.Client:
the requests its arguments make, and plans, generators that yield (method, request) and are sent
each answer, so that the blocking client drives them with blocking calls and the asyncio one
with awaited calls. Neither holds a channel here."""

import datetime
import getpass
import socket

from ablationd._proto import ablation_pb2, enum_word, parse_shape

PAGE = 1000  # the most a page of ListRuns / QueryMeasurements holds


def ms(t):
    if t is None:
        return 0
    if isinstance(t, (int, float)):
        return int(t)
    if isinstance(t, datetime.datetime):  # pandas.Timestamp is one too
        if t.tzinfo is None:
            t = t.replace(tzinfo=datetime.timezone.utc)
        return int(t.timestamp() * 1000)
    raise TypeError(f"a time must be unix milliseconds or a datetime, not {type(t).__name__}")


def status(word):
    if not word:
        return ablation_pb2.MEASUREMENT_STATUS_UNSPECIFIED
    name = "MEASUREMENT_STATUS_" + word.upper()
    if name not in ablation_pb2.MeasurementStatus.keys():
        raise ValueError(f"status {word!r} is not ok, failed or skipped")
    return ablation_pb2.MeasurementStatus.Value(name)


def run_state(word):
    name = "RUN_STATE_" + str(word).upper()
    if name not in ablation_pb2.RunState.keys() or name == "RUN_STATE_UNSPECIFIED":
        raise ValueError(f"state {word!r} is not queued, running, succeeded, partial, failed or "
                         "cancelled")
    return ablation_pb2.RunState.Value(name)


def as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, (str, int)) else list(value)


def shapes(value):
    # A tuple is one shape (m, n, k), as parse_shape takes it; a list is a list of shapes.
    return [parse_shape(s) for s in ([value] if isinstance(value, tuple) else as_list(value))]


def run_request(variants=None, shapes_=None, dtype="", preset="", tags=None, rounds=0,
                order_seed=0, verify=False, device=0, allow_missing=False, hot_l2=False,
                flush_l2=False, min_samples=0, max_seconds=0.0, target_noise=0.0,
                lock_sm_clock="", lock_mem_clock="", requested_by=None, regime="",
                unpaired=False, window_seconds=0.0, burst_seconds=0.0, fresh_inputs=False):
    """The RunRequest of Client.run_request's arguments (`shapes_`: its `shapes`)."""
    request = ablation_pb2.RunRequest(
        variants=as_list(variants), shapes=shapes(shapes_), dtype=dtype,
        preset=preset, tags=as_list(tags), rounds=rounds, order_seed=order_seed, verify=verify,
        device=device, allow_missing=allow_missing,
        requested_by=requested_by or f"{getpass.getuser()}@{socket.gethostname()} (python)")
    timing = request.timing
    timing.hot_l2, timing.flush_l2 = hot_l2, flush_l2
    timing.fresh_inputs = bool(fresh_inputs)
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


def get_run_request(run="latest", include_samples=False):
    run_id = 0 if run in (None, "latest") else int(run)
    return ablation_pb2.GetRunRequest(run_id=run_id, include_samples=include_samples)


# ---------------------------------------------------------------- plans


def runs_plan(tag=None, state=None, limit=50):
    """Runs, newest first, page after page up to `limit` (None or 0: all)."""
    request = ablation_pb2.ListRunsRequest(tag=tag or "", page_size=PAGE)
    if state:
        request.state = run_state(state)
    out = []
    while True:
        page = yield "ListRuns", request
        out.extend(page.runs)
        if (limit and len(out) >= limit) or not page.next_page_token:
            return out[:limit] if limit else out
        request.page_token = page.next_page_token


def measurements_plan(include_samples, run, variant, dtype, shape, tag, status_word, since,
                      until):
    """(Measurement messages, {run id: Run}) of one run (GetRun) or of a query across runs."""
    filters = (variant, dtype, shape, tag, status_word, since, until)
    if run is not None and all(f is None for f in filters):
        response = yield "GetRun", get_run_request(run, include_samples)
        return list(response.measurements), {response.run.id: response.run}
    request = ablation_pb2.QueryMeasurementsRequest(
        variant_glob=variant or "", dtype=dtype or "", tag=tag or "", status=status(status_word),
        since_ms=ms(since), until_ms=ms(until), page_size=PAGE, include_samples=include_samples)
    if shape is not None:
        request.shape.CopyFrom(parse_shape(shape))
    if run == "latest":
        request.run_id = (yield "GetRun", get_run_request("latest")).run.id
    elif run is not None:
        request.run_id = int(run)
    rows = []
    while True:
        page = yield "QueryMeasurements", request
        rows.extend(page.measurements)
        if not page.next_page_token:
            break
        request.page_token = page.next_page_token
    runs = yield from runs_by_id_plan({m.run_id for m in rows})
    return rows, runs


def runs_by_id_plan(ids):
    # ListRuns pages newest first: stop once the oldest id wanted has been passed.
    found, request = {}, ablation_pb2.ListRunsRequest(page_size=PAGE)
    while ids - found.keys():
        page = yield "ListRuns", request
        found.update({r.id: r for r in page.runs if r.id in ids})
        if not page.next_page_token or (page.runs and page.runs[-1].id <= min(ids)):
            break
        request.page_token = page.next_page_token
    return found


def stored_count_plan(run_id):
    """(measurements of run `run_id` stored already, its planned measurements, their ids): where
    a watch that joins late counts on from, and to; a row the watch then sends again is known by
    its id."""
    response = yield "GetRun", get_run_request(run_id)
    return (len(response.measurements), response.run.planned,
            [m.id for m in response.measurements])


def note_event(summary, event):
    """Brings a RunSummary up to date with one RunEvent."""
    kind = event.WhichOneof("event")
    if kind == "queued":
        summary.run_id = event.queued.run_id
        summary.state = "queued"
    elif kind == "started":
        summary.run_id = event.started.run_id
        summary.state, summary.planned = "running", event.started.total
    elif kind == "finished":
        f = event.finished
        summary.run_id = f.run_id
        summary.state = enum_word(ablation_pb2.RunState, f.state)
        summary.ok, summary.failed = f.ok, f.failed
    elif kind == "failed":
        summary.state, summary.reason = "failed", event.failed.reason
