"""The generated stubs, imported in one place so that their absence says what to do."""

import json

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
    return enum_word_of(enum_type.DESCRIPTOR.values_by_number[value])


def word_to_name(enum_descriptor, word):
    """"succeeded" -> "RUN_STATE_SUCCEEDED" (enum_word's inverse; "" -> the zero value). A word the
    enum does not have is returned as it is, for the parser to name."""
    if isinstance(word, str):
        for value in enum_descriptor.values:
            if enum_word_of(value) == word.lower():
                return value.name
    return word


def enum_word_of(value_descriptor) -> str:
    """The word of one value (an EnumValueDescriptor)."""
    prefix = value_descriptor.type.values[0].name[: -len("UNSPECIFIED")]
    word = value_descriptor.name[len(prefix):]
    return "" if word == "UNSPECIFIED" else word.lower()


def holds_json(field) -> bool:
    """A string field whose text is a JSON document (its name ends in _json: Run.request_json)."""
    return field.type == field.TYPE_STRING and field.name.endswith("_json")


def words_to_names(obj, descriptor):
    """The JSON of a message of type `descriptor` as the client prints it (enum values as words,
    int64 values as numbers, a JSON document held in a string as that document), with the words
    back into protobuf's value names and the documents back into text, so that json_format can
    parse it. In place; returns obj."""
    if not isinstance(obj, dict):
        return obj
    for key, value in obj.items():
        field = descriptor.fields_by_name.get(key)
        if field is None:
            continue
        is_map = (field.message_type is not None
                  and field.message_type.GetOptions().map_entry)
        element = field.message_type.fields_by_name["value"] if is_map else field

        def one(v):
            if element.enum_type is not None:
                return word_to_name(element.enum_type, v)
            if element.message_type is not None:
                return words_to_names(v, element.message_type)
            if holds_json(element) and not isinstance(v, str):
                # The client shows a JSON document held in a string (Run.request_json) as that
                # document (null when empty); the message holds its text.
                return "" if v is None else json.dumps(v, separators=(",", ":"))
            return v

        if is_map and isinstance(value, dict):
            obj[key] = {k: one(v) for k, v in value.items()}
        elif isinstance(value, list):
            obj[key] = [one(v) for v in value]
        else:
            obj[key] = one(value)
    return obj


JSON_SCHEMA_VERSION = 2  # client/output/json.h's kJsonSchemaVersion


def envelope_items(text, kind):
    """The items of `ablation-client --format json`'s envelope of `kind`, as dicts (enum values
    as words). ValueError when the text is no such envelope."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e}: {text[:200]!r}") from None
    if not isinstance(doc, dict) or "items" not in doc or "kind" not in doc:
        raise ValueError(f"not the client's JSON envelope: {text[:200]!r}")
    if doc.get("schema_version") != JSON_SCHEMA_VERSION:
        raise ValueError(f"JSON schema_version {doc.get('schema_version')!r}; this package reads "
                         f"{JSON_SCHEMA_VERSION}")
    if doc["kind"] != kind:
        raise ValueError(f"the JSON holds {doc['kind']!r}, not {kind!r}")
    return doc["items"]


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
