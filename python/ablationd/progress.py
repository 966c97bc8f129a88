"""A run's progress as a bar: an on_event callback for Client.run, Client.follow (the watch
stream) and their asyncio twins. tqdm's bar where tqdm is installed (Debian: python3-tqdm; pip:
ablationd[progress]), else one text line as the CLI draws it: "[12/40] abl_L1_R1_bl0_s3_sw1 bf16
4096x4096x4096 | 3s elapsed, ETA 7s", redrawn in place on a terminal, a line per measurement
elsewhere."""

import sys
import time

from ablationd._proto import shape_text


def _duration(seconds):
    """As the CLI writes it (client/output/format.cc FormatDuration): 42s, 3m07s, 1h05m."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def chain(*callbacks):
    """One on_event callback that calls each of `callbacks` that is not None (None if none is)."""
    present = [c for c in callbacks if c is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]

    def call(event):
        for c in present:
            c(event)

    return call


class ProgressBar:
    """Counts a run's measurements against its total (the Started event's) and draws them.

    initial: measurements stored before this stream began (a watch that joins late counts on
    from there, as `ablation-client watch` does); total: the run's planned measurements, until
    its Started event says. use_tqdm: None (tqdm where installed), True or
    False. file: where to draw (default stderr). After the run's last event, `n == total` for a
    run that measured everything; `bar` is the tqdm bar (None for the text line)."""

    def __init__(self, initial=0, total=0, file=None, use_tqdm=None, description="run"):
        self.n = int(initial)
        self.total = int(total)
        self.file = file if file is not None else sys.stderr
        self.description = description
        tqdm = _tqdm() if use_tqdm in (None, True) else None
        if use_tqdm and tqdm is None:
            raise ImportError("ProgressBar(use_tqdm=True): tqdm is not installed "
                              "(apt install python3-tqdm, or pip install tqdm)")
        self._tqdm = tqdm
        self.bar = None
        self._plan = []
        self._initial = self.n
        self._started_at = None
        self._closed = False
        self._counted = set()
        self._tty = hasattr(self.file, "isatty") and self.file.isatty()

    def count_from(self, initial, total, stored_ids=()):
        """Before the stream: `initial` measurements are stored already, of `total` planned;
        `stored_ids` their ids, so that a row stored between that count and the watch, which the
        watch sends too, is counted once."""
        self.n = self._initial = int(initial)
        self.total = int(total)
        self._counted = {int(i) for i in stored_ids if i}

    def __call__(self, event):
        kind = event.WhichOneof("event")
        if kind == "started":
            s = event.started
            self.total = s.total
            self._plan = list(s.plan)
            self._started_at = time.monotonic()
            if self._tqdm is not None and self.bar is None:
                self.bar = self._tqdm(total=self.total, initial=self.n, file=self.file,
                                      desc=f"{self.description} {s.run_id}", unit="measurement",
                                      dynamic_ncols=True, leave=True)
            self._draw()
        elif kind == "measurement":
            if event.measurement.id:
                if event.measurement.id in self._counted:
                    return
                self._counted.add(event.measurement.id)
            self.n += 1
            if self.bar is not None:
                m = event.measurement
                self.bar.set_postfix_str(f"{m.variant} {m.dtype} {shape_text(m.shape)}",
                                         refresh=False)
                self.bar.update(1)
            else:
                self._draw()
        elif kind == "finished":
            # The run's own count: a row stored between the stored count a late watch began
            # from and the watch itself was in neither.
            done = event.finished.ok + event.finished.failed
            if done > self.n:
                if self.bar is not None:
                    self.bar.update(done - self.n)
                self.n = done
                self._draw()
            self.close()
        elif kind == "failed":
            self.close()

    def _line(self):
        line = f"[{self.n}/{self.total}]"
        if self.n < len(self._plan):
            p = self._plan[self.n]
            line += f" {p.variant} {p.dtype} {shape_text(p.shape)}"
        elapsed = time.monotonic() - (self._started_at or time.monotonic())
        timed = self.n - self._initial
        eta = _duration(elapsed / timed * max(self.total - self.n, 0)) if timed > 0 else "-"
        return f"{line} | {_duration(elapsed)} elapsed, ETA {eta}"

    def _draw(self):
        if self.bar is not None or self._closed:
            return
        if self._tty:
            self.file.write("\r\033[K" + self._line())
        else:
            self.file.write(self._line() + "\n")
        self.file.flush()

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self.bar is not None:
            self.bar.close()
        elif self._tty and self.total:
            self.file.write("\n")
            self.file.flush()


def as_bar(progress):
    """A run's or a watch's `progress` argument: False or None (no bar), True (a ProgressBar on
    stderr) or a ProgressBar of the caller's."""
    if isinstance(progress, ProgressBar):
        return progress
    return ProgressBar() if progress else None


def progress_bar(**kwargs) -> ProgressBar:
    """ProgressBar(**kwargs): `daemon.run(..., on_event=ablationd.progress_bar())`."""
    return ProgressBar(**kwargs)
