"""RunEvent in words, for progress callbacks."""

import sys

from ablationd._proto import ablation_pb2, enum_word, shape_text


def describe_event(event) -> str:
    """One line per event of RunAblation's stream, as the CLI's progress shows them."""
    kind = event.WhichOneof("event")
    if kind == "queued":
        return f"run {event.queued.run_id}: queued at position {event.queued.position}"
    if kind == "started":
        s = event.started
        device = s.device.name or f"GPU {s.device.index}"
        return f"run {s.run_id}: started on {device}: {s.total} measurements"
    if kind == "measurement":
        m = event.measurement
        where = f"{m.variant} {m.dtype} {shape_text(m.shape)} round {m.round}"
        if m.status == ablation_pb2.MEASUREMENT_STATUS_OK:
            return f"run {m.run_id}: {where}: {m.stats.median_ms:.4g} ms, {m.tflops:.1f} TFLOPS"
        status = enum_word(ablation_pb2.MeasurementStatus, m.status)
        return f"run {m.run_id}: {where}: {status}: {m.error}"
    if kind == "finished":
        f = event.finished
        state = enum_word(ablation_pb2.RunState, f.state)
        return f"run {f.run_id}: {state}, {f.ok} ok, {f.failed} failed"
    if kind == "failed":
        return f"run {event.failed.run_id}: failed: {event.failed.reason}"
    return "unknown event"


def print_event(event, file=None) -> None:
    """A ready-made on_event callback: describe_event on stderr (or `file`)."""
    print(describe_event(event), file=file or sys.stderr, flush=True)
