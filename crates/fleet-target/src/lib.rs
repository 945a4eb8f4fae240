//! Targeting and placement: cluster index, target matching, customizations, rollout partitions, scheduler. Pure.
