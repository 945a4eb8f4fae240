#!/usr/bin/env python3
"""Regenerates `src/list_types.txt`: for each list field of the built-in kinds, its
`x-kubernetes-list-type` (atomic, set, map) and, for maps, its `x-kubernetes-list-map-keys`.

The facts come from the merge strategies `k8s-openapi` derives from the Kubernetes OpenAPI document
(`merge_strategies::list::{atomic,set,map}` in its `DeepMerge` impls); JSON names from its serde keys.
Output lines: `<definition> <jsonField> <atomic|set|map> [key,key...]`.

Usage: python3 tools/gen_list_types.py > src/list_types.txt
"""
import glob
import os
import re
import sys

REGISTRY = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/"))
OPENAPI = sorted(glob.glob(REGISTRY[0] + "k8s-openapi-*/src"))[-1] + "/v1_33"

KEY = re.compile(r'"([A-Za-z0-9_$-]+)" => Field::Key_([a-z0-9_]+)')
STRATEGY = re.compile(
    r"merge_strategies::list::(atomic|set|map)\(\s*&mut self\.(?:r#)?(\w+),(?:\s*other\.\w+,\s*&\[((?:\|lhs, rhs\| lhs\.\w+ == rhs\.\w+,?\s*)+)\])?",
    re.S,
)
KEY_FIELD = re.compile(r"lhs\.(?:r#)?(\w+) == rhs")


def main():
    out = []
    paths = sorted(glob.glob(OPENAPI + "/**/*.rs", recursive=True))
    overall = {}
    for path in paths:
        for camel, snake in KEY.findall(open(path).read()):
            overall.setdefault(snake.rstrip("_"), camel)
    for path in paths:
        text = open(path).read()
        struct = re.search(r"^pub struct (\w+)", text, re.M)
        if not struct:
            continue
        rel = os.path.relpath(path, OPENAPI).split(os.sep)[:-1]
        definition = "io.k8s." + ".".join(rel) + "." + struct.group(1)
        names = {snake.rstrip("_"): camel for camel, snake in KEY.findall(text)}
        for kind, field, keys in STRATEGY.findall(text):
            json_field = names.get(field.rstrip("_"), field)
            line = f"{definition} {json_field} {kind}"
            if kind == "map":
                line += " " + ",".join(overall.get(k.rstrip("_"), k) for k in KEY_FIELD.findall(keys))
            out.append(line)
    sys.stdout.write("\n".join(out) + "\n")


main()
