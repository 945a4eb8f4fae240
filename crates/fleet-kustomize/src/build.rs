//! The build: loading a kustomization, accumulating its resources (files, bases, components) and generators,
//! running its transformers in kustomize's order, recursing into bases with cycle detection; then, at the top,
//! hash suffixes, name-reference fixing and ordering.

use std::borrow::Cow;

use crate::error::{Error, Result, Warning};
use crate::fieldspec::{FieldSpec, NameReference, TransformerConfig, merge_specs};
use crate::files::{self, Files};
use crate::generators::{self, Kind};
use crate::kustomization::{self, Kustomization, Loaded};
use crate::resmap::ResMap;
use crate::resource::Resource;
use crate::root::resolve_in_root;
use crate::transform::{images, metadata, names, replicas};
use crate::{Options, hash, name_reference, order, patches, replacements};

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
}

/// An accumulation: resources and the transformer configuration gathered so far.
pub(crate) struct Accumulated {
    pub resmap: ResMap,
    /// The built-in tables, shared, until `configurations` or `crds` add to them.
    pub config: Cow<'static, TransformerConfig>,
    pub vars: Vec<crate::vars::Declared>,
}

pub(crate) struct Builder<'f, F: Files> {
    pub files: &'f F,
    pub options: &'f Options,
    /// Directories being built, outermost first (cycle detection).
    stack: Vec<String>,
    /// What the build accepted but the user should hear about, in build order.
    pub warnings: Vec<Warning>,
}

impl<'f, F: Files> Builder<'f, F> {
    pub fn new(files: &'f F, options: &'f Options) -> Self {
        Builder {
            files,
            options,
            stack: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn enter(&mut self, dir: &str) -> Result<()> {
        if let Some(pos) = self.stack.iter().position(|d| d == dir) {
            let mut chain: Vec<&str> = self.stack[pos..]
                .iter()
                .map(|d| files::display(d))
                .collect();
            chain.push(files::display(dir));
            return Err(Error::Cycle {
                chain: chain.join(" -> "),
            });
        }
        if self.stack.len() >= self.options.max_depth {
            return Err(Error::invalid(
                files::display(dir),
                format!(
                    "kustomizations nest more than {} levels deep",
                    self.options.max_depth
                ),
            ));
        }
        self.stack.push(dir.to_string());
        Ok(())
    }

    /// Builds the kustomization in `dir` completely (the top level).
    /// `prepend_resource` is put first in the top kustomization's `resources` unless already listed (Fleet's
    /// Helm post-rendering).
    pub fn build(&mut self, dir: &str, prepend_resource: Option<&str>) -> Result<ResMap> {
        let mut loaded = kustomization::load(self.files, dir)?;
        if let Some(extra) = prepend_resource
            && !loaded.kustomization.resources.iter().any(|r| r == extra)
        {
            loaded.kustomization.resources.insert(0, extra.to_string());
        }
        if loaded.kustomization.is_component() {
            return Err(Error::invalid(
                &loaded.file,
                "this is a Component; build a Kustomization that lists it under `components`",
            ));
        }
        let sort = loaded.kustomization.sort_options.clone();
        self.enter(dir)?;
        let mut acc = self.accumulate(dir, &loaded, None)?;
        self.stack.pop();
        for r in acc.resmap.items.iter_mut().filter(|r| r.needs_hash) {
            let name = format!("{}-{}", r.name(), hash::suffix(&r.obj));
            r.set_name(&name);
        }
        name_reference::fix(&mut acc.resmap.items, &acc.config)?;
        crate::vars::resolve(&mut acc.resmap.items, &acc.vars, &acc.config.var_reference)?;
        order::sort(&mut acc.resmap.items, sort.as_ref())
            .map_err(|e| Error::invalid(&loaded.file, e.to_string()))?;
        Ok(acc.resmap)
    }

    /// kustomize's accumulateTarget: `parent` is the accumulation a component adds to.
    fn accumulate(
        &mut self,
        dir: &str,
        loaded: &Loaded,
        parent: Option<Accumulated>,
    ) -> Result<Accumulated> {
        let k = &loaded.kustomization;
        let kfile = loaded.file.as_str();
        reject_unsupported(k, kfile)?;
        let mut acc = parent.unwrap_or_else(|| Accumulated {
            resmap: ResMap::default(),
            config: Cow::Borrowed(TransformerConfig::builtin()),
            vars: Vec::new(),
        });
        for entry in &k.resources {
            self.add_resource(&mut acc, dir, kfile, entry)?;
        }
        for entry in &k.components {
            if is_remote(entry) {
                return Err(remote(kfile, "components", entry));
            }
            let path = files::join(dir, entry).ok_or_else(|| Error::OutsideRoot {
                file: kfile.into(),
                field: "components".into(),
                entry: entry.clone(),
                root: files::display(dir).into(),
            })?;
            if !self.files.is_dir(&path) {
                return Err(Error::Missing {
                    file: kfile.into(),
                    field: "components".into(),
                    entry: entry.clone(),
                    resolved: path,
                });
            }
            let sub = kustomization::load(self.files, &path)?;
            if !sub.kustomization.is_component() {
                return Err(Error::invalid(
                    &sub.file,
                    format!(
                        "listed under `components` in {kfile} but its kind is not Component; set `kind: Component`"
                    ),
                ));
            }
            self.enter(&path)?;
            acc = self.accumulate(&path, &sub, Some(acc))?;
            self.stack.pop();
        }
        if !k.configurations.is_empty() || !k.crds.is_empty() {
            self.merge_configurations(acc.config.to_mut(), dir, kfile, k)?;
        }
        self.generate(&mut acc.resmap, dir, kfile, k)?;
        self.transform(&mut acc, dir, kfile, k)?;
        crate::vars::merge(&mut acc.vars, crate::vars::parse(&k.vars, kfile)?)?;
        Ok(acc)
    }

    fn add_resource(
        &mut self,
        acc: &mut Accumulated,
        dir: &str,
        kfile: &str,
        entry: &str,
    ) -> Result<()> {
        if is_remote(entry) {
            return Err(remote(kfile, "resources", entry));
        }
        let path = files::join(dir, entry).ok_or_else(|| Error::OutsideRoot {
            file: kfile.into(),
            field: "resources".into(),
            entry: entry.into(),
            root: files::display(dir).into(),
        })?;
        if let Some(bytes) = self.files.read(&path) {
            if !files::is_within(dir, &path) {
                return Err(Error::OutsideRoot {
                    file: kfile.into(),
                    field: "resources".into(),
                    entry: entry.into(),
                    root: files::display(dir).into(),
                });
            }
            let objects = crate::yaml::objects(&bytes, &path)?;
            acc.resmap.extend(
                objects
                    .into_iter()
                    .map(|obj| Resource::new(obj, &path))
                    .collect(),
            )?;
            return Ok(());
        }
        if !self.files.is_dir(&path) {
            return Err(Error::Missing {
                file: kfile.into(),
                field: "resources".into(),
                entry: entry.into(),
                resolved: path,
            });
        }
        let sub = kustomization::load(self.files, &path)?;
        if sub.kustomization.is_component() {
            return Err(Error::invalid(
                kfile,
                format!(
                    "resources entry {entry:?} is a Component; list it under `components` instead"
                ),
            ));
        }
        self.enter(&path)?;
        let child = self.accumulate(&path, &sub, None)?;
        self.stack.pop();
        acc.resmap.append_all(child.resmap)?;
        if let Cow::Owned(child_config) = &child.config {
            merge_config(acc.config.to_mut(), child_config);
        }
        crate::vars::merge(&mut acc.vars, child.vars)?;
        Ok(())
    }

    fn merge_configurations(
        &self,
        cfg: &mut TransformerConfig,
        dir: &str,
        kfile: &str,
        k: &Kustomization,
    ) -> Result<()> {
        for entry in &k.configurations {
            let path = resolve_in_root(dir, kfile, "configurations", entry)?;
            let bytes = self.files.read(&path).ok_or_else(|| Error::Missing {
                file: kfile.into(),
                field: "configurations".into(),
                entry: entry.clone(),
                resolved: path.clone(),
            })?;
            for doc in crate::yaml::documents(&bytes, &path)? {
                let extra: crate::config::ConfigFile =
                    serde_json::from_value(doc).map_err(|e| {
                        Error::invalid(&path, format!("invalid transformer configuration: {e}"))
                    })?;
                extra.merge_into(cfg);
            }
        }
        for entry in &k.crds {
            let path = resolve_in_root(dir, kfile, "crds", entry)?;
            let bytes = self.files.read(&path).ok_or_else(|| Error::Missing {
                file: kfile.into(),
                field: "crds".into(),
                entry: entry.clone(),
                resolved: path.clone(),
            })?;
            for doc in crate::yaml::documents(&bytes, &path)? {
                crate::config::merge_crd_schema(&doc, cfg);
            }
        }
        Ok(())
    }

    fn generate(&self, m: &mut ResMap, dir: &str, kfile: &str, k: &Kustomization) -> Result<()> {
        let global = k.generator_options.as_ref();
        let config_maps = k.config_map_generator.iter().map(|a| (Kind::ConfigMap, a));
        let secrets = k.secret_generator.iter().map(|a| (Kind::Secret, a));
        let generated = config_maps
            .chain(secrets)
            .map(|(kind, args)| generators::generate(self.files, dir, kfile, kind, args, global))
            .collect::<Result<Vec<_>>>()?;
        m.absorb_all(generated, kfile)?;
        self.inflate_helm_charts(m, dir, kfile, k)
    }

    #[cfg(feature = "helm")]
    fn inflate_helm_charts(
        &self,
        m: &mut ResMap,
        dir: &str,
        kfile: &str,
        k: &Kustomization,
    ) -> Result<()> {
        let helm_options = crate::helm::HelmOptions {
            kube_version: self.options.kube_version.clone(),
        };
        for chart in &k.helm_charts {
            let globals = k.helm_globals.as_ref();
            let rendered =
                crate::helm::inflate(self.files, dir, kfile, globals, chart, &helm_options)?;
            m.absorb_all(rendered, kfile)?;
        }
        Ok(())
    }

    #[cfg(not(feature = "helm"))]
    fn inflate_helm_charts(
        &self,
        _m: &mut ResMap,
        _dir: &str,
        kfile: &str,
        k: &Kustomization,
    ) -> Result<()> {
        if k.helm_charts.is_empty() {
            return Ok(());
        }
        Err(Error::invalid(
            kfile,
            "`helmCharts`: this build of fleet-kustomize has no Helm engine (cargo feature `helm` is off)",
        ))
    }

    fn transform(
        &mut self,
        acc: &mut Accumulated,
        dir: &str,
        kfile: &str,
        k: &Kustomization,
    ) -> Result<()> {
        let files = self.files;
        let m = &mut acc.resmap;
        let cfg = &acc.config;
        patches::apply_strategic_merge_list(m, files, dir, kfile, &k.patches_strategic_merge)?;
        patches::apply_patches(
            m,
            files,
            dir,
            kfile,
            "patches",
            &k.patches,
            self.options.strict_patch_targets,
            &mut self.warnings,
        )?;
        if let Some(ns) = k.namespace.as_deref().filter(|n| !n.is_empty()) {
            names::set_namespace(&mut m.items, ns, cfg);
        }
        names::add_prefix_suffix(
            &mut m.items,
            k.name_prefix.as_deref().unwrap_or(""),
            k.name_suffix.as_deref().unwrap_or(""),
            cfg,
        );
        for label in &k.labels {
            let mut specs: Vec<FieldSpec> = label.fields.iter().map(FieldSpec::from).collect();
            if label.include_selectors {
                merge_specs(&mut specs, &cfg.common_labels);
            } else {
                if label.include_templates {
                    merge_specs(&mut specs, &cfg.template_labels);
                }
                merge_specs(
                    &mut specs,
                    &[FieldSpec::new("", "", "", "metadata/labels", true)],
                );
            }
            metadata::add_pairs(&mut m.items, &label.pairs, &specs, kfile)?;
        }
        metadata::add_pairs(&mut m.items, &k.common_labels, &cfg.common_labels, kfile)?;
        metadata::add_pairs(
            &mut m.items,
            &k.common_annotations,
            &cfg.common_annotations,
            kfile,
        )?;
        patches::apply_patches(
            m,
            files,
            dir,
            kfile,
            "patchesJson6902",
            &k.patches_json6902,
            self.options.strict_patch_targets,
            &mut self.warnings,
        )?;
        for r in &k.replicas {
            replicas::set_replicas(&mut m.items, r, cfg);
        }
        for image in &k.images {
            images::apply(&mut m.items, image, cfg);
        }
        replacements::apply(m, files, dir, kfile, &k.replacements)?;
        Ok(())
    }
}

fn remote(kfile: &str, field: &str, entry: &str) -> Error {
    Error::invalid(
        kfile,
        format!(
            "{field} entry {entry:?} is a remote URL; remote bases are not supported (Fleet builds offline) — \
             vendor the files into the repository and refer to them by relative path"
        ),
    )
}

fn reject_unsupported(k: &Kustomization, kfile: &str) -> Result<()> {
    let unsupported = [
        (
            "generators",
            !k.generators.is_empty(),
            "generator plugins are disabled, as in Fleet",
        ),
        (
            "transformers",
            !k.transformers.is_empty(),
            "transformer plugins are disabled, as in Fleet",
        ),
        (
            "validators",
            !k.validators.is_empty(),
            "validator plugins are disabled, as in Fleet",
        ),
        (
            "buildMetadata",
            !k.build_metadata.is_empty(),
            "buildMetadata is not supported",
        ),
        (
            "helmChartInflationGenerator",
            !k.helm_chart_inflation_generator.is_empty(),
            "the legacy helmChartInflationGenerator field is not supported; use `helmCharts`",
        ),
    ];
    if let Some(openapi) = &k.openapi
        && openapi.get("path").is_some()
    {
        return Err(Error::invalid(
            kfile,
            "`openapi.path`: custom OpenAPI schemas for strategic merge are not supported; remove it, or use \
             JSON 6902 patches for custom resources' lists",
        ));
    }
    for (field, present, why) in unsupported {
        if present {
            return Err(Error::invalid(kfile, format!("`{field}`: {why}")));
        }
    }
    Ok(())
}

fn merge_config(into: &mut TransformerConfig, from: &TransformerConfig) {
    merge_specs(&mut into.name_prefix, &from.name_prefix);
    merge_specs(&mut into.namespace, &from.namespace);
    merge_specs(&mut into.common_labels, &from.common_labels);
    merge_specs(&mut into.template_labels, &from.template_labels);
    merge_specs(&mut into.common_annotations, &from.common_annotations);
    merge_specs(&mut into.images, &from.images);
    merge_specs(&mut into.replicas, &from.replicas);
    merge_specs(&mut into.var_reference, &from.var_reference);
    for row in &from.name_reference {
        into.add_name_reference(NameReference { ..row.clone() });
    }
}
