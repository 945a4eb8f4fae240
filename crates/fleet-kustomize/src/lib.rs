//! Kustomize (kustomization.yaml) rendering, natively. Pure.
