#!/usr/bin/env python3
"""Regenerates `src/patch_strategies.txt`: the strategic-merge-patch metadata of the built-in kinds' fields
(the `patchStrategy` / `patchMergeKey` struct tags of k8s.io/api, which kube-apiserver publishes in its
OpenAPI as `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`).

The tags are read from a kubectl binary (Go keeps struct tags for reflection), e.g.
`json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,7,rep,name=env"`; the
protobuf field number and JSON name place each tag in the messages of `src/protobuf/messages.txt`
(definition `io.k8s.<message>`), a repeated (`rep`) tag only on a repeated or map
field. Output lines: `<definition> <jsonField> <strategy> [mergeKey]`.

A few (JSON name, field number) pairs carry a patch tag in some structs and none in others, so the binary
alone cannot place them; `AMBIGUOUS` places them from k8s.io/api's sources.

Usage: python3 tools/gen_patch_strategies.py PATH/TO/kubectl > src/patch_strategies.txt
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGES = os.path.join(HERE, "..", "src", "protobuf", "messages.txt")
TAG = re.compile(r'json:"([A-Za-z0-9]+)[^"]*".*')


# (JSON name, number) whose tag differs between structs → the messages that carry the patch tag.
AMBIGUOUS = {
    ("selector", 2): {"api.policy.v1.PodDisruptionBudgetSpec"},
    ("ports", 1): {"api.core.v1.ServiceSpec"},
    ("conditions", 6): {
        "api.apps.v1.DeploymentStatus",
        "api.apps.v1.ReplicaSetStatus",
        "api.core.v1.ReplicationControllerStatus",
        "api.autoscaling.v2.HorizontalPodAutoscalerStatus",
    },
    ("conditions", 1): {"api.batch.v1.JobStatus", "api.networking.v1.ServiceCIDRStatus"},
    ("items", 2): set(),
}


def tags(binary):
    text = subprocess.run(["strings", "-n", "20", binary], capture_output=True, text=True).stdout
    found = set()
    untagged = set()
    for match in (TAG.search(line) for line in text.splitlines()):
        if not match:
            continue
        tag = match.group(0)
        strategy = re.search(r'patchStrategy:"([^"]+)"', tag)
        number = re.search(r'protobuf:"[a-z0-9]+,(\d+),(opt|rep|req)', tag)
        if not number:
            continue
        if not strategy:
            untagged.add((match.group(1), int(number.group(1)), number.group(2) == "rep"))
            continue
        key = re.search(r'patchMergeKey:"([^"]+)"', tag)
        repeated = number.group(2) == "rep"
        found.add((match.group(1), int(number.group(1)), repeated, strategy.group(1), key.group(1) if key else ""))
    ambiguous = {(name, number) for name, number, repeated, *_ in found if (name, number, repeated) in untagged}
    if ambiguous != set(AMBIGUOUS):
        sys.exit(f"ambiguous patch tags changed: {sorted(ambiguous)}; update AMBIGUOUS")
    return found


def fields():
    message = None
    for line in open(MESSAGES):
        parts = line.split()
        if parts[:1] == ["message"]:
            message = parts[1]
        elif message and len(parts) >= 2 and parts[0].isdigit():
            kind = parts[2] if len(parts) > 2 else ""
            # Repeated fields and maps (`ms`, `mm`, `mb`) are `rep` in Go's protobuf tags.
            repeated = kind.startswith("r") or kind in ("ms", "mm", "mb")
            yield message, int(parts[0]), parts[1], repeated


def main():
    by_field = {}
    for json_name, number, repeated, strategy, key in tags(sys.argv[1]):
        by_field.setdefault((json_name, number), set()).add((repeated, strategy, key))
    out = []
    for message, number, json_name, repeated in fields():
        placed = AMBIGUOUS.get((json_name, number))
        if placed is not None and message not in placed:
            continue
        for tag_repeated, strategy, key in sorted(by_field.get((json_name, number), ())):
            # Go marks some repeated fields `opt`; a `rep` tag never belongs to a single field.
            if tag_repeated and not repeated:
                continue
            out.append(f"io.k8s.{message} {json_name} {strategy} {key}".rstrip())
    sys.stdout.write("\n".join(sorted(set(out))) + "\n")


main()
