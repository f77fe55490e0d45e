"""The artifact layer: the file formats (job, packet, result, receipt, transcript), their
published schemas, the caps a packet is held to, and the leaf utilities every layer may
use (errors, canonical JSON, the atomic write, escaping, strict JSON). It imports nothing
else of hz. Of the runtime, the compiler may use it, the process chokepoint and jsonschema."""
