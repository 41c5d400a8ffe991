"""spec_front: the front checks of a spec, as one declarative description.

Both engines run the same checks on a spec before any family rule: the kind
of every field (``int``, ``str``, ``bool``, ``float``), the string rules (at
most :data:`MAX_STRING_BYTES` bytes of UTF-8, printable text), unknown field
names, a partial group of split-K fields (:data:`SPLIT_K_FIELDS`: a spec that
sets one sets all) and unknown family, arch and flavor names -- with the same
reasons, in the same order. This package holds that description once: the rules per kind
in check order (:data:`KIND_RULES`), each rule's failure test and reason
template (:data:`RULES`), and the small functions that read them.

Who reads it:

* the Python engine's field table (python_engine/spec/fields.py), for every
  spec it lowers;
* the C++ engine's cffi binding (cpp_engine/_binding.py), for the values it
  must refuse before they reach C (a non-str in a str field, a Python int
  past 64 bits, a lone surrogate that cannot be encoded), so a Python caller
  reads the same reason from both engines.

The C++ engine itself does not read it: its own checks (cpp_engine/src/spec/
fields.{h,cpp}, ``kMaxStringBytes``, ``printable_utf8``, ``string_reason``)
are written independently in C++ and give the same texts to C callers; the
gate's fuzzers (``parity fuzz``, the C API fuzzer) compare the two.

This package imports nothing of the project (import-linter contract
``spec-front-independent``).
"""
from .checks import (FLOAT_INT_LIMIT, I64_MAX, I64_MIN, KIND_RULES, MAX_STRING_BYTES, RULES, SPLIT_K_FIELDS, exact,
                     group_fields, group_reason, length_reason, printable, string_reason, text_reason, too_long,
                     type_reason, unknown_field_reason, unknown_name_reason)

__all__ = ["FLOAT_INT_LIMIT", "I64_MAX", "I64_MIN", "KIND_RULES", "MAX_STRING_BYTES", "RULES", "SPLIT_K_FIELDS",
           "exact", "group_fields", "group_reason", "length_reason", "printable", "string_reason", "text_reason",
           "too_long", "type_reason", "unknown_field_reason", "unknown_name_reason"]
