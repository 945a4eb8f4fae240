//! Rendering as Fleet's agent does for kustomize-style bundles (`kustomize.dir`, and Helm output post-processed
//! by kustomize): only a `kustomization.yaml` makes a bundle kustomize-style; the Helm output, when there is any,
//! is written as `<dir>/fleet-manifests.yaml` and put first in that kustomization's `resources`.

use std::borrow::Cow;

use serde_json::Value;

use crate::build::Builder;
use crate::error::{Error, Result};
use crate::files::{self, Files};
use crate::{Built, Options};

/// The file Fleet writes the Helm output to.
pub const MANIFESTS_FILE: &str = "fleet-manifests.yaml";

/// The one kustomization file name that makes a Fleet bundle kustomize-style.
pub const KUSTOMIZATION_FILE: &str = "kustomization.yaml";

/// A file tree with one extra file laid over it.
struct WithFile<'a, F: Files> {
    base: &'a F,
    path: String,
    content: &'a [u8],
}

impl<F: Files> Files for WithFile<'_, F> {
    fn read(&self, path: &str) -> Option<Cow<'_, [u8]>> {
        if path == self.path {
            return Some(Cow::Borrowed(self.content));
        }
        self.base.read(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        files::is_within(path, &self.path) && path != self.path || self.base.is_dir(path)
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let mut out = self.base.list(dir);
        if files::is_within(dir, &self.path) && !out.contains(&self.path) {
            out.push(self.path.clone());
            out.sort();
        }
        out
    }
}

/// Renders `<dir>/kustomization.yaml` with the Helm output `helm_output` (possibly empty) as Fleet does.
/// `Ok(None)` when there is no `kustomization.yaml` in `dir` (the bundle is not kustomize-style).
pub fn render(
    files: &impl Files,
    dir: &str,
    helm_output: &[u8],
    options: &Options,
) -> Result<Option<Vec<Value>>> {
    Ok(render_reporting(files, dir, helm_output, options)?.map(|b| b.objects))
}

/// [`render`], also returning the build's warnings (e.g. a patch whose target matches nothing) for the user.
pub fn render_reporting(
    files: &impl Files,
    dir: &str,
    helm_output: &[u8],
    options: &Options,
) -> Result<Option<Built>> {
    let dir = files::join("", dir)
        .ok_or_else(|| Error::invalid(dir, "the directory is outside the file tree"))?;
    let kfile = files::join(&dir, KUSTOMIZATION_FILE).unwrap_or_else(|| KUSTOMIZATION_FILE.into());
    if files.read(&kfile).is_none() {
        return Ok(None);
    }
    let layered = WithFile {
        base: files,
        path: files::join(&dir, MANIFESTS_FILE).unwrap_or_else(|| MANIFESTS_FILE.into()),
        content: helm_output,
    };
    let prepend = (!helm_output.is_empty()).then_some(MANIFESTS_FILE);
    let mut builder = Builder::new(&layered, options);
    let resmap = builder.build(&dir, prepend)?;
    Ok(Some(Built {
        objects: resmap.items.into_iter().map(|r| r.obj).collect(),
        warnings: builder.warnings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::from_texts as tree;

    #[test]
    fn helm_output_becomes_the_first_resource() {
        let t = tree(&[
            (
                "overlays/dev/kustomization.yaml",
                "namePrefix: dev-\npatchesStrategicMerge:\n- patch.yaml\n",
            ),
            (
                "overlays/dev/patch.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: NodePort\n",
            ),
        ]);
        let helm = b"---\n# Source: c/templates/s.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n";
        let out = render(&t, "overlays/dev", helm, &Options::default())
            .unwrap()
            .unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["metadata"]["name"], "dev-web");
        assert_eq!(out[0]["spec"]["type"], "NodePort");
        assert_eq!(out[0]["spec"]["ports"][0]["port"], 80);
    }

    #[test]
    fn only_kustomization_yaml_makes_a_bundle_kustomize_style() {
        let t = tree(&[("Kustomization", "resources: []\n")]);
        assert_eq!(render(&t, "", b"", &Options::default()).unwrap(), None);
        let t = tree(&[("kustomization.yaml", "resources: [fleet-manifests.yaml]\n")]);
        let out = render(
            &t,
            ".",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            &Options::default(),
        );
        assert_eq!(out.unwrap().unwrap().len(), 1, "listed once, not twice");
    }
}
