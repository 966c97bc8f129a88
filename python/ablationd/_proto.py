"""The generated stubs, imported in one place so that their absence says what to do."""

try:
    from ablation.v1 import ablation_pb2, ablation_pb2_grpc, report_pb2  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only on a broken setup
    raise ImportError(
        "ablationd: the generated gRPC stubs (package ablation.v1) are not importable "
        f"({e}). They are written at build time: cmake --build --preset default --target "
        "ablationd-python, then put build/default/python on sys.path (or PYTHONPATH)."
    ) from e


def enum_word(enum_type, value: int) -> str:
    """RUN_STATE_SUCCEEDED -> "succeeded": the words the database and the CLI use."""
    # Every enum of the API starts with its X_UNSPECIFIED = 0, which names the prefix.
    prefix = enum_type.DESCRIPTOR.values[0].name[: -len("UNSPECIFIED")]
    word = enum_type.Name(value)[len(prefix):]
    return "" if word == "UNSPECIFIED" else word.lower()


def parse_shape(shape) -> "ablation_pb2.Shape":
    """A Shape from "4096", "4096x4096x2048", 4096, (m, n, k) or a Shape itself."""
    if isinstance(shape, ablation_pb2.Shape):
        return shape
    if isinstance(shape, int):
        return ablation_pb2.Shape(m=shape, n=shape, k=shape)
    if isinstance(shape, (tuple, list)) and len(shape) == 3:
        m, n, k = (int(x) for x in shape)
        return ablation_pb2.Shape(m=m, n=n, k=k)
    if isinstance(shape, str):
        parts = shape.lower().split("x")
        try:
            values = [int(p) for p in parts]
        except ValueError:
            values = []
        if len(values) == 1:
            values *= 3
        if len(values) == 3 and all(v > 0 for v in values):
            return ablation_pb2.Shape(m=values[0], n=values[1], k=values[2])
    raise ValueError(
        f"shape {shape!r} is not MxNxK, N, an int or an (m, n, k) tuple of positive sizes")


def shape_text(shape) -> str:
    return f"{shape.m}x{shape.n}x{shape.k}"
