#!/usr/bin/env python3
"""Regenerates `src/protobuf/messages.txt`, the field table the protobuf decoder reads.

Field numbers and wire types come from the prost bindings of the `k8s-pb` crate; JSON member names come from
the serde keys of `k8s-openapi` (per type, then across all types, then a plain snake-to-camel conversion).
Both crates must be in the local cargo registry (`cargo fetch` brings them in).

Usage: python3 tools/gen_protobuf_schema.py > src/protobuf/messages.txt
"""
import glob
import os
import re
import sys

REGISTRY = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/"))
PB = sorted(glob.glob(REGISTRY[0] + "k8s-pb-*/src"))[-1]
OPENAPI = sorted(glob.glob(REGISTRY[0] + "k8s-openapi-*/src"))[-1] + "/v1_34"
ROOTS = ("api", "apimachinery", "apiextensions_apiserver")

KEY = re.compile(r'"([A-Za-z0-9_$-]+)" => Field::Key_([a-z0-9_]+)')
STRUCT = re.compile(r"^pub struct (\w+) \{")
ATTR = re.compile(r'#\[prost\(([a-z0-9_]+)(?: = "([^"]*)")?, (?:(optional|repeated), )?(?:boxed, |packed = "false", )?tag = "(\d+)"\)\]')
FIELD = re.compile(r"^\s*pub (?:r#)?(\w+): (.*),$")


def openapi_names():
    per_type, overall = {}, {}
    for path in glob.glob(OPENAPI + "/**/*.rs", recursive=True):
        rel = os.path.relpath(path, OPENAPI)[:-3].split(os.sep)
        type_key = ".".join(rel[:-1]) + "." + rel[-1].replace("_", "")
        names = {}
        with open(path) as f:
            for camel, snake in KEY.findall(f.read()):
                names[snake.rstrip("_")] = camel
                overall.setdefault(snake.rstrip("_"), camel)
        per_type[type_key] = names
    return per_type, overall


def camel(snake):
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def resolve(module, rust_type):
    """`super::super::core::v1::Pod` seen from module `api.apps.v1` -> `api.core.v1.Pod`."""
    inner = re.sub(r"^::core::option::Option<(.*)>$", r"\1", rust_type)
    inner = re.sub(r"^::prost::alloc::vec::Vec<(.*)>$", r"\1", inner)
    inner = re.sub(r"^::prost::alloc::collections::BTreeMap<[^,]+, (.*)>$", r"\1", inner)
    parts = inner.split("::")
    base = module.split(".")
    while parts and parts[0] == "super":
        parts.pop(0)
        base.pop()
    return ".".join(base + parts)


def main():
    per_type, overall = openapi_names()
    out = []
    for path in sorted(glob.glob(PB + "/**/mod.rs", recursive=True)):
        rel = os.path.relpath(os.path.dirname(path), PB).replace(os.sep, ".")
        if rel.split(".")[0] not in ROOTS:
            continue
        pending = None
        lines = iter(open(path))
        for line in lines:
            while pending and re.match(r"^\s*pub ", line) and not line.rstrip().endswith(","):
                line = line.rstrip() + " " + next(lines).strip()
            m = STRUCT.match(line)
            if m:
                name = m.group(1)
                names = per_type.get(rel.replace("apis.", "") + "." + name.lower(), {})
                if not names:
                    names = per_type.get(rel.split("pkg.")[-1] + "." + name.lower(), {})
                out.append(f"message {rel}.{name}")
                continue
            m = ATTR.search(line)
            if m:
                pending = m.groups()
                continue
            m = FIELD.match(line)
            if m and pending:
                wire, extra, label, tag = pending
                snake, rust_type = m.groups()
                loose = {c.lower(): c for c in names.values()}
                json_name = (
                    names.get(snake)
                    or loose.get(snake.replace("_", ""))
                    or overall.get(snake)
                    or camel(snake)
                )
                if wire == "message":
                    kind = ("rm " if label == "repeated" else "m ") + resolve(rel, rust_type)
                elif wire == "btree_map":
                    value = extra.split(", ")[1]
                    kind = "mm " + resolve(rel, rust_type) if value == "message" else "m" + value[0]
                else:
                    kind = ("r" if label == "repeated" else "") + wire
                out.append(f"{tag} {json_name} {kind}")
                pending = None
    sys.stdout.write("\n".join(out) + "\n")


main()
