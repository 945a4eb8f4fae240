//! Kustomize rendering of bundles through `fleet-kustomize`, as Fleet's post-renderer does: the kustomization in
//! `kustomize.dir` (or the bundle root) is built over all of the bundle's files, with the Helm output (if any)
//! written as `fleet-manifests.yaml` and put first in its `resources`.

use fleet_kustomize::{Built, Options, fleet};

use super::{Files, RenderError};

fn error(dir: &str, err: fleet_kustomize::Error) -> RenderError {
    RenderError::Kustomize {
        dir: if dir.is_empty() {
            ".".into()
        } else {
            dir.into()
        },
        problem: Box::new(err),
    }
}

/// Post-renders `helm_output` (possibly empty) with `<dir>/kustomization.yaml`; `None` when there is none.
pub fn post_render(
    files: &Files,
    dir: &str,
    helm_output: &str,
) -> Result<Option<Built>, RenderError> {
    fleet::render_reporting(files, dir, helm_output.as_bytes(), &Options::default())
        .map_err(|err| error(dir, err))
}

/// Builds the kustomization in `dir` (any of kustomize's file names) over the bundle's files.
pub fn build(files: &Files, dir: &str) -> Result<Built, RenderError> {
    if let Some(built) = post_render(files, dir, "")? {
        return Ok(built);
    }
    fleet_kustomize::build_reporting(files, dir, &Options::default()).map_err(|err| error(dir, err))
}
