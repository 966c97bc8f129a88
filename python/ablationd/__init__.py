"""Python access to ablationd: runs, their progress, results and raw samples as pandas
DataFrames, and the report of ``ablation-client report``.

    import ablationd
    with ablationd.connect("127.0.0.1:50051") as daemon:   # or the CLI's TLS options: ca=,
                                                          # cert=, key=, tls_server_name=
        summary = daemon.run(preset="ladder-a", shapes=["4096"], on_event=ablationd.print_event)
        df = daemon.results(run=summary.run_id)
        runs = daemon.runs(tag="nightly")           # one row per run (run_messages(): the messages)
        samples = daemon.samples(run=summary.run_id)
        report = daemon.report(run=summary.run_id)   # the CLI's report model (report.proto)
        ablationd.plot.ladder(report)                 # matplotlib: bars, intervals, cuBLAS
        daemon.follow(run_id, progress=True)          # a running run's progress bar (tqdm)
        series = daemon.history("L1_R1_s3", tag="nightly")  # typed rows, change points marked

``ablationd.aio`` has the same calls for asyncio (grpc.aio). The package is typed (PEP 561).

The gRPC stubs (package ``ablation.v1``) are generated from proto/ at build time into the build
tree next to this package (build/default/python); put that folder on ``sys.path``.
"""

from ablationd import history, plot
from ablationd.client import AblationError, Client, RunSummary, connect
from ablationd.events import describe_event, print_event
from ablationd.frames import measurements_frame, report_frame, runs_frame, samples_frame
from ablationd.progress import ProgressBar, progress_bar

__all__ = [
    "AblationError",
    "Client",
    "RunSummary",
    "connect",
    "describe_event",
    "print_event",
    "measurements_frame",
    "runs_frame",
    "samples_frame",
    "report_frame",
    "plot",
    "history",
    "ProgressBar",
    "progress_bar",
]
